import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {PublicKey} from '@solana/web3.js'

import {BaseCommand} from '../../cli/base-command.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {ensureLocalnet, localnetStatus} from '../../lib/localnet/server/control.js'
import {dataDirFlag} from '../../cli/localnet-flags.js'
import {fundFromFaucet} from '../../lib/localnet/fund.js'
import {DEFAULT_FUNDING} from '../../lib/localnet/state.js'
import {type AmountJson, amountJson, parseAmount} from '../../lib/text/amounts.js'
import {SOL_DECIMALS} from '../../lib/market/rpc/balances.js'
import {TOKEN_DECIMALS} from '../../lib/market/networks.js'
import {amountText} from '../../lib/market/jobs/report.js'
import {openWallet} from '../../lib/keys/wallet.js'
import {openCreditLedger} from '../../lib/credits/ledger.js'
import {localnetFiles} from '../../lib/localnet/paths.js'

interface FundReport {
  network: 'localnet'
  address: string
  mint?: string
  signature?: string
  sol?: {added: AmountJson; balance: AmountJson}
  tokens?: {added: AmountJson; balance: AmountJson}
  /** With --credits: what the localnet's credit ledger gave the address, and what it has free now. */
  credits?: {added: AmountJson; balance: AmountJson}
}

export default class LocalnetFund extends BaseCommand {
  static override summary =
    'Send SOL and payment tokens from the localnet faucet to an address (your wallet by default).'
  static override description = `Starts a localnet in the background when none runs. Without --sol and --tokens, sends ${DEFAULT_FUNDING.sol} SOL and ${DEFAULT_FUNDING.tokens} tokens. The tokens land in the address's associated token account, created when missing.`

  static override examples = [
    '<%= config.bin %> localnet fund',
    '<%= config.bin %> localnet fund 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin --sol 2 --tokens 50',
    '<%= config.bin %> localnet fund --tokens 0.5 --json',
  ]

  static override args = {
    address: Args.string({
      description: 'address to fund [default: your wallet, $GPUNET_WALLET or ~/.config/gpunet/wallet.json]',
    }),
  }

  static override flags = {
    sol: Flags.string({
      description: `SOL to send (decimals allowed) [default: ${DEFAULT_FUNDING.sol} when --tokens is not given]`,
    }),
    tokens: Flags.string({
      description: `payment tokens to send [default: ${DEFAULT_FUNDING.tokens} when --sol is not given]`,
    }),
    credits: Flags.string({
      description:
        "credits to add to the address's account in the localnet's credit ledger (what `job post --credits` spends, with an API key of that address); alone, sends no SOL or tokens",
    }),
    'data-dir': dataDirFlag,
  }

  async run(): Promise<FundReport> {
    const {args, flags} = await this.parse(LocalnetFund)
    const credits = flags.credits === undefined ? null : parseAmount(flags.credits, CREDIT_DECIMALS, 'credit')
    if (credits !== null && credits === 0n) {
      throw new GpunetError('nothing_to_fund', 'nothing to add: --credits is 0', {
        exitCode: ExitCode.USAGE,
        hint: 'Give a positive amount, e.g. --credits 10.',
      })
    }
    const both = flags.sol === undefined && flags.tokens === undefined && credits === null
    if (credits !== null && flags.sol === undefined && flags.tokens === undefined) {
      const owner = await this.fundOwner(args.address)
      return this.addCredits({network: 'localnet', address: owner.toBase58()}, this.settings.localnet.dataDir, credits)
    }
    const lamports = parseAmount(flags.sol ?? (both ? String(DEFAULT_FUNDING.sol) : '0'), SOL_DECIMALS, 'SOL')
    const tokens = parseAmount(flags.tokens ?? (both ? String(DEFAULT_FUNDING.tokens) : '0'), TOKEN_DECIMALS, 'token')
    if (lamports === 0n && tokens === 0n) {
      throw new GpunetError('nothing_to_fund', 'nothing to send: --sol and --tokens are both 0', {
        exitCode: ExitCode.USAGE,
        hint: 'Give a positive amount, e.g. --sol 1 or --tokens 10.',
      })
    }
    const owner = await this.fundOwner(args.address)

    const {dataDir} = this.settings.localnet
    const runtime = await ensureLocalnet(dataDir, this.settings.localnet.port, (line) => this.note(line))
    const status = await localnetStatus(dataDir)
    const mint = new PublicKey(status.mint!)
    const result = await fundFromFaucet(dataDir, runtime, mint, owner, {lamports, tokens})

    const sol = {
      added: amountJson(lamports, SOL_DECIMALS, 'SOL'),
      balance: amountJson(result.lamports, SOL_DECIMALS, 'SOL'),
    }
    const token = {
      added: amountJson(tokens, TOKEN_DECIMALS, 'token'),
      balance: amountJson(result.tokens, TOKEN_DECIMALS, 'token'),
    }
    const report: FundReport = {
      network: 'localnet',
      address: owner.toBase58(),
      mint: mint.toBase58(),
      signature: result.signature,
      sol,
      tokens: token,
    }
    this.say(`Funded ${report.address} on localnet: +${amountText(sol.added)}, +${amountText(token.added)}`)
    this.say(`  Balance      ${amountText(sol.balance)}, ${amountText(token.balance)}`)
    this.say(`  Signature    ${report.signature}`)
    return credits === null ? report : this.addCredits(report, dataDir, credits)
  }

  /** The address given, else the wallet's (made on localnet when missing). */
  private async fundOwner(address: string | undefined): Promise<PublicKey> {
    if (address) return parseAddress(address)
    return (await openWallet(this.settings, {create: true, note: (line) => this.note(line)})).publicKey
  }

  /**
   * Adds credits in the ledger of the localnet's data directory: a local file, as the faucet's key is, written
   * beside the running localnet (SQLite in WAL takes both).
   */
  private addCredits(report: FundReport, dataDir: string, units: bigint): FundReport {
    const ledger = openCreditLedger(localnetFiles(dataDir).credits)
    let balance
    try {
      balance = ledger.topUp(report.address, Number(units), Date.now())
    } finally {
      ledger.close()
    }
    const free = BigInt(balance.assigned - balance.reserved - balance.settled)
    const added = amountJson(units, CREDIT_DECIMALS, 'credit')
    const now = amountJson(free, CREDIT_DECIMALS, 'credit')
    this.say(`Added ${amountText(added)} to ${report.address} on localnet: ${amountText(now)} available`)
    return {...report, credits: {added, balance: now}}
  }
}

/** Credits have the payment token's 6 decimals: the localnet prices one at a token. */
const CREDIT_DECIMALS = TOKEN_DECIMALS

function parseAddress(text: string): PublicKey {
  try {
    return new PublicKey(text)
  } catch {
    throw new GpunetError('invalid_address', `"${text}" is not a Solana address`, {
      exitCode: ExitCode.USAGE,
      hint: 'An address is 32 bytes in base58, e.g. 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin.',
    })
  }
}
