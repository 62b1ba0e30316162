import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../base-command.js'
import {marketFlags} from '../../flags.js'
import {amountJson} from '../../lib/market/amounts.js'
import {confirmSpend} from '../../lib/market/confirm.js'
import {extendJob, extendReport, type ExtendReport, quoteExtend} from '../../lib/market/manage.js'
import {openOwnJob} from '../../lib/network-connection.js'
import {TOKEN_DECIMALS} from '../../lib/market/networks.js'
import {amountText, reportLines} from '../../lib/market/report.js'
import {feeText} from '../../lib/market/send.js'
import type {Network} from '../../lib/network.js'

export default class JobExtend extends BaseCommand {
  static override summary = "Extend a job's timeout to a new, larger total, paying the difference at the job's price."
  static override description = `--timeout is the new total duration in seconds; it must be larger than the current one. The wallet must hold price x the difference (exit 4 otherwise, nothing sent). On devnet and mainnet the cost is confirmed first, unless --yes.`

  static override examples = [
    '<%= config.bin %> job extend 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --timeout 14400',
  ]

  static override args = {job: Args.string({description: 'job address', required: true})}
  static override flags = {
    timeout: Flags.integer({description: 'new total timeout in seconds', required: true, min: 1, helpValue: 'SECONDS'}),
    yes: Flags.boolean({char: 'y', description: 'spend without asking (devnet, mainnet)'}),
    ...marketFlags,
  }

  async run(): Promise<{network: Network} & ExtendReport> {
    const {args, flags} = await this.parse(JobExtend)
    const {network} = this.settings
    const {net, wallet, view} = await openOwnJob(this.settings, args.job, (line) => this.note(line))
    const timeout = BigInt(flags.timeout)
    const quote = await quoteExtend(net, wallet, view, timeout)
    const charged = amountJson(quote.cost, TOKEN_DECIMALS, 'token')
    this.note(`Transaction fee: ${feeText(quote.fee)}`)
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
}
