import {BaseCommand} from '../../base-command.js'
import {networkFlags} from '../../flags.js'
import {openWallet, walletPath} from '../../lib/settings.js'

export default class WalletAddress extends BaseCommand {
  static override summary = "Print the wallet's address (its public key)."
  static override description =
    "The wallet is --wallet FILE, else GPUNET_WALLET, else the profile's, else ~/.config/gpunet/wallet.json; the same wallet serves every network. Nothing is created: a missing wallet is exit 3 (create one with `wallet new`)."

  static override examples = [
    '<%= config.bin %> wallet address',
    '<%= config.bin %> wallet address --wallet ~/.config/solana/id.json --json',
  ]

  static override flags = {wallet: networkFlags.wallet, profile: networkFlags.profile}

  async run(): Promise<{address: string; file: string}> {
    await this.parse(WalletAddress)
    const wallet = await openWallet(this.settings, {create: false})
    this.say(wallet.address)
    return {address: wallet.address, file: walletPath(this.settings).file}
  }
}
