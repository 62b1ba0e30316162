import {BaseCommand} from '../../base-command.js'
import {networkFlags} from '../../flags.js'
import {loadWallet, walletPath} from '../../lib/wallet.js'

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
    const {flags} = await this.parse(WalletAddress)
    const wallet = await loadWallet({path: flags.wallet})
    this.say(wallet.address)
    return {address: wallet.address, file: walletPath({path: flags.wallet}).file}
  }
}
