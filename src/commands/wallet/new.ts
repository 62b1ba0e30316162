import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {networkFlags} from '../../cli/flags.js'
import {generateKeypairBytes} from '../../lib/keys/ed25519.js'
import {installWallet} from '../../lib/keys/wallet.js'
import {walletPath} from '../../lib/settings/settings.js'

export default class WalletNew extends BaseCommand {
  static override summary = 'Create a new wallet (a Solana keypair file, mode 0600).'
  static override description =
    "Writes a Solana CLI keypair file (a JSON array of 64 numbers) at --wallet FILE, else GPUNET_WALLET, else the profile's, else ~/.config/gpunet/wallet.json, and prints its address; the secret key is never printed. An existing wallet is never replaced without --force (exit 2); with it, the old file is first kept as <file>.<time>.bak."

  static override examples = [
    '<%= config.bin %> wallet new',
    '<%= config.bin %> wallet new --wallet ~/keys/devnet.json --json',
  ]

  static override flags = {
    wallet: networkFlags.wallet,
    profile: networkFlags.profile,
    force: Flags.boolean({description: 'replace an existing wallet (its file is kept as a .bak copy)'}),
  }

  static paysOrDestroys = {what: 'destroys', whenFlag: 'force'} as const

  async run(): Promise<{address: string; file: string; backup: string | null}> {
    const {flags} = await this.parse(WalletNew)
    const {file} = walletPath(this.settings)
    const {wallet, backup} = installWallet(file, generateKeypairBytes(), {force: flags.force})
    if (backup) this.note(`The wallet it replaced is kept at ${backup}`)
    this.say(`${this.color('green', '✔')} Created a wallet at ${file}`)
    this.say(`  Address  ${wallet.address}`)
    return {address: wallet.address, file, backup}
  }
}
