import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {readFile} from 'node:fs/promises'

import {BaseCommand} from '../../cli/base-command.js'
import {networkFlags} from '../../cli/flags.js'
import {describeReadError} from '../../lib/text/read-error.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {askHidden, canPrompt} from '../../lib/terminal/prompt.js'
import {readStdin} from '../../lib/terminal/stdin.js'
import {installWallet, parseKeypairText} from '../../lib/keys/wallet.js'
import {walletPath} from '../../lib/settings/settings.js'

export default class WalletImport extends BaseCommand {
  static override summary = 'Import a wallet: a Solana CLI keypair file, or a base58 secret key on standard input.'
  static override description =
    'FILE is a keypair file as `solana-keygen` writes it (a JSON array of 64 numbers). Without FILE (or with -), the key is read from standard input: a base58 secret key as wallets export it, or the same JSON array; at a terminal it is asked for without echo. A key is never taken as an argument, where shell history and process lists would keep it. A keypair whose public half does not match its secret half is refused (exit 3). The wallet is written with mode 0600 where `wallet new` would write it; an existing one is replaced only with --force (the old file kept as a .bak copy).'

  static override examples = [
    '<%= config.bin %> wallet import ~/.config/solana/id.json',
    'pbpaste | <%= config.bin %> wallet import --wallet ~/keys/devnet.json',
    '<%= config.bin %> wallet import   # asks for the base58 key without echo',
  ]

  static override args = {
    file: Args.string({description: 'Solana CLI keypair file; - or nothing reads standard input'}),
  }

  static override flags = {
    wallet: networkFlags.wallet,
    profile: networkFlags.profile,
    force: Flags.boolean({description: 'replace an existing wallet (its file is kept as a .bak copy)'}),
  }

  static mcp = {exclude: "takes a wallet's secret key"}

  async run(): Promise<{address: string; file: string; backup: string | null}> {
    const {args, flags} = await this.parse(WalletImport)
    const source = args.file === undefined || args.file === '-' ? 'standard input' : args.file
    const text = source === 'standard input' ? await readKeyFromStdin() : await readKeyFile(source)
    const {file} = walletPath(this.settings)
    const {wallet, backup} = installWallet(file, parseKeypairText(text, source), {force: flags.force, source})
    if (backup) this.note(`The wallet it replaced is kept at ${backup}`)
    this.say(`${this.color('green', '✔')} Imported the wallet from ${source} to ${file}`)
    this.say(`  Address  ${wallet.address}`)
    return {address: wallet.address, file, backup}
  }
}

async function readKeyFromStdin(): Promise<string> {
  return canPrompt() ? askHidden('Secret key (base58 or a JSON array): ') : readStdin()
}

/** Reads a keypair file; an argument that is no file but looks like a key is refused as one (it is now in history). */
async function readKeyFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    const looksLikeKey = /^[1-9A-HJ-NP-Za-km-z]{64,100}$/.test(path) || path.trim().startsWith('[')
    throw new GpunetError(
      looksLikeKey ? 'key_as_argument' : 'wallet_unreadable',
      looksLikeKey
        ? 'that argument looks like a secret key, not a file: keys are read from standard input only'
        : `cannot read the keypair file ${path}: ${describeReadError(error)}`,
      {
        exitCode: looksLikeKey ? ExitCode.USAGE : ExitCode.INVALID_INPUT,
        hint: looksLikeKey
          ? 'pipe it in (`... | gpunet wallet import`) or run `gpunet wallet import` at a terminal; and clear it from your shell history'
          : 'pass a Solana CLI keypair file, or pipe a base58 secret key on standard input',
      },
    )
  }
}
