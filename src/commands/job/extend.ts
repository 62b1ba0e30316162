import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {apiKeyFlag, managerFlag, marketFlags, secondsFlag} from '../../cli/flags.js'
import {creditAmount, extendWithCredits, newIdempotencyKey} from '../../lib/credits/client.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {connectManager} from '../../lib/manager-connection.js'
import {connectMarket} from '../../lib/network-connection.js'
import {parseAddress} from '../../lib/market/connect.js'
import {readJob} from '../../lib/market/jobs/jobs.js'
import type {AmountJson} from '../../lib/text/amounts.js'
import {amountJson} from '../../lib/text/amounts.js'
import {confirmSpend} from '../../lib/market/rpc/confirm.js'
import {extendJob, extendReport, type ExtendReport, quoteExtend} from '../../lib/market/jobs/manage.js'
import {openOwnJob} from '../../lib/network-connection.js'
import {TOKEN_DECIMALS} from '../../lib/market/networks.js'
import {SOL_DECIMALS} from '../../lib/market/rpc/balances.js'
import {amountText, reportLines} from '../../lib/market/jobs/report.js'
import {feeJson, type FeeJson, feeText} from '../../lib/market/rpc/send.js'
import type {Network} from '../../lib/network.js'

/** What `job extend --dry-run --json` prints: the quote, nothing sent. */
interface ExtendDryRun {
  dryRun: true
  network: Network
  job: string
  previousTimeout: number
  timeout: number
  /** Price per second x (new timeout - previous timeout). */
  totalPrice: AmountJson
  fee: FeeJson
  wallet: {address: string; sol: AmountJson; tokens: AmountJson}
}

export default class JobExtend extends BaseCommand {
  static override summary = "Extend a job's timeout to a new, larger total, paying the difference at the job's price."
  static override description = `--timeout is the new total duration (a duration such as 4h or 90m, or a number of seconds); it must be larger than the current one. The wallet must hold price x the difference (exit 4 otherwise, nothing sent). On devnet and mainnet the cost is confirmed first, unless --yes. --dry-run prints that quote (the price of the difference, the fee, the wallet) and stops: nothing sent.`

  static override examples = ['<%= config.bin %> job extend 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --timeout 4h']

  static override args = {job: Args.string({description: 'job address', required: true})}
  static override flags = {
    timeout: secondsFlag({description: 'the new total timeout', required: true}),
    yes: Flags.boolean({char: 'y', description: 'spend without asking (devnet, mainnet)'}),
    credits: Flags.boolean({
      description:
        "a job paid by credits (job post --credits): extended by the network's API that listed it, with your API key, paid by your credits",
      exclusive: ['dry-run'],
    }),
    'dry-run': Flags.boolean({
      description: 'print the quote (the price of the difference, the fee, the wallet), then stop: nothing sent',
    }),
    manager: managerFlag,
    'api-key': apiKeyFlag,
    ...marketFlags,
  }

  static paysOrDestroys = {what: 'wallet'} as const

  async run(): Promise<({network: Network} & ExtendReport) | ExtendDryRun | CreditExtendReport> {
    const {args, flags} = await this.parse(JobExtend)
    const {network} = this.settings
    if (flags.credits) return this.extendWithCredits(args.job, flags.timeout, flags.yes)
    const {net, wallet, view} = await openOwnJob(this.settings, args.job, (line) => this.note(line))
    const timeout = BigInt(flags.timeout)
    const quote = await quoteExtend(net, wallet, view, timeout)
    const charged = amountJson(quote.cost, TOKEN_DECIMALS, 'token')
    this.note(`Transaction fee: ${feeText(quote.fee)}`)
    if (flags['dry-run']) {
      this.say(`Extending job ${args.job} to ${timeout} s would cost ${amountText(charged)} (nothing sent)`)
      return {
        dryRun: true,
        network,
        job: args.job,
        previousTimeout: Number(quote.previousTimeout),
        timeout: Number(quote.timeout),
        totalPrice: charged,
        fee: feeJson(quote.fee),
        wallet: {
          address: wallet.address,
          sol: amountJson(quote.balances.lamports, SOL_DECIMALS, 'SOL'),
          tokens: amountJson(quote.balances.tokens, TOKEN_DECIMALS, 'token'),
        },
      }
    }
    await confirmSpend(network, `Extend job ${args.job} to ${timeout} s for ${amountText(charged)}?`, flags.yes)
    const sent = await extendJob(net, quote)
    const report = {network, ...extendReport(args.job, quote, sent)}
    this.say(`Extended job ${args.job} on ${network}`)
    for (const line of reportLines([
      ['Timeout', `${report.previousTimeout} s -> ${report.timeout} s`],
      ['Charged', amountText(report.charged)],
      ['Signature', report.signature],
      ['Fee', feeText(sent.fee)],
    ]))
      this.say(line)
    return report
  }

  /** The job's timeout read from the chain (anyone may), the difference bought from the API with credits. */
  private async extendWithCredits(job: string, timeout: number, yes: boolean): Promise<CreditExtendReport> {
    const {network} = this.settings
    const note = (line: string) => this.note(line)
    const net = await connectMarket(this.settings, note)
    const view = await readJob(net.connection, net.programId, parseAddress(job, 'the job'))
    const previous = Number(view.job.timeout)
    if (timeout <= previous) {
      throw new GpunetError(
        'timeout_not_larger',
        `the new timeout (${timeout} s) must be larger than the current one (${previous} s)`,
        {
          exitCode: ExitCode.USAGE,
          hint: '--timeout is the new total duration in seconds, not an addition',
          fields: {job, timeout, currentTimeout: previous},
        },
      )
    }
    const api = await connectManager(this.settings, {note})
    await confirmSpend(network, `Extend job ${job} to ${timeout} s, paid by credits?`, yes)
    const answer = await extendWithCredits(api.client, job, timeout - previous, newIdempotencyKey())
    const report: CreditExtendReport = {
      network,
      job,
      previousTimeout: previous,
      timeout,
      charged: creditAmount(answer.credits.creditsUsed),
      signature: answer.tx,
      manager: api.url,
    }
    this.say(`Extended job ${job} on ${network}, paid by credits`)
    for (const line of reportLines([
      ['Timeout', `${previous} s -> ${timeout} s`],
      ['Charged', amountText(report.charged)],
      ['Signature', report.signature],
    ]))
      this.say(line)
    return report
  }
}

/** `job extend --credits --json`: as an extension paid by the wallet, charged in credits, with no fee of yours. */
interface CreditExtendReport {
  network: Network
  job: string
  previousTimeout: number
  timeout: number
  charged: AmountJson
  signature: string
  manager: string
}
