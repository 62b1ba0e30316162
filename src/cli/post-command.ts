import * as Flags from '@oclif/core/flags'

import type {Interfaces} from '@oclif/core'
import {ux} from '@oclif/core/ux'

import {BaseCommand} from './base-command.js'
import {
  apiKeyFlag,
  managerFlag,
  marketFlag,
  marketFlags,
  needOfFlags,
  networkFlags,
  placementFlags,
  secondsFlag,
  waitFlags,
} from './flags.js'
import {waitRequest} from './wait.js'
import type {PostableDefinition} from '../lib/definition/upload.js'
import {
  type CreditPostReport,
  type DryRunReport,
  type PostReport,
  postUpload,
  type Reported,
} from '../lib/job/posting.js'
import {confirmSpend} from '../lib/market/rpc/confirm.js'
import {rowsWithOutcome} from '../lib/market/jobs/job-info.js'
import {resultText} from '../lib/results/job-result.js'
import {amountText, jobRows, reportLines} from '../lib/market/jobs/report.js'
import {startProgress} from '../lib/terminal/progress.js'
import {printable} from '../lib/text/terminal-text.js'
import {type Placement, placementLines} from '../lib/market/jobs/placement.js'
import {PublicKey} from '@solana/web3.js'

/** The flags of every command that posts a job (`job post`, `job run`), apart from where its definition comes from. */
export const postFlags = {
  market: marketFlag,
  ...placementFlags,
  timeout: secondsFlag({description: "how long the job may run [default: the market's job timeout]"}),
  'queue-timeout': secondsFlag({
    description:
      "wait until the job runs; still QUEUED after this long, it is delisted (deposit back) and listed on the next market that fits, until one runs or none is left (exit 3). At least 1m, at most the market's job timeout; not with --credits",
  }),
  yes: Flags.boolean({char: 'y', description: 'spend without asking (devnet, mainnet)'}),
  'dry-run': Flags.boolean({
    description:
      'run every check and print the quote (price, total, fees, balance), then stop: nothing uploaded or sent',
  }),
  'secrets-check': Flags.boolean({
    description: 'check that every %%secrets.NAME%% the job refers to is stored (--no-secrets-check skips it)',
    default: true,
    allowNo: true,
  }),
  'queue-anyway': Flags.boolean({
    description: 'on localnet, post a job that no localnet node would run (its node is off, or it has no GPU)',
  }),
  credits: Flags.boolean({
    description:
      "pay with credits of the network's API instead of the wallet's tokens: posted through its /api/jobs/list with your API key (--api-key, GPUNET_API_KEY); the API's wallet lists the job",
    exclusive: ['dry-run'],
  }),
  'idempotency-key': Flags.string({
    description:
      'with --credits, the key the post is sent with [default: a new one per run]; give the same one to a re-run of a post that may have gone through, and it lists the job once',
    helpValue: 'KEY',
    dependsOn: ['credits'],
  }),
  'api-key': apiKeyFlag,
  manager: managerFlag,
  quiet: Flags.boolean({
    char: 'q',
    description: 'print only the job address on stdout (for scripts: JOB=$(gpunet job post -q job.json))',
    exclusive: ['json', 'dry-run'],
  }),
  ...waitFlags,
  ...marketFlags,
  'secrets-url': networkFlags['secrets-url'],
  'allow-unbound-login': networkFlags['allow-unbound-login'],
}

/** The parsed values of `postFlags`. */
export type PostFlags = Interfaces.InferredFlags<typeof postFlags>

/** The base of the commands that post a job: they parse it, the posting workflow (lib/job/posting.ts) posts it, they render. */
export abstract class PostCommand extends BaseCommand {
  /** `--quiet`: the report's lines are left out, and stdout gets the job's address alone. */
  private quiet = false

  protected override say(text = ''): void {
    if (!this.quiet) super.say(text)
  }

  /** Checks, quotes and (unless `--dry-run`) uploads and posts a checked definition, then follows it with `--wait`. */
  protected async postDefinition(
    flags: PostFlags,
    {upload}: PostableDefinition,
  ): Promise<PostReport | DryRunReport | CreditPostReport> {
    this.quiet = flags.quiet
    const {network} = this.settings
    // --market names the market to post to; the setting's other layers make the network's default market (on
    // localnet, the localnet's own), which the localnet's node serves.
    // A market given by a flag, the environment, a profile or the config file is explicit: placement only checks
    // it against a need; the preset's default is not, so a need places the job.
    const given = this.settings.typed('market')
    const posted = await postUpload(this.settings, upload, {
      market: given !== undefined && given.from !== 'preset' ? new PublicKey(given.value) : undefined,
      need: needOfFlags(flags),
      timeout: flags.timeout,
      queueTimeout: flags['queue-timeout'],
      crashEnv: process.env,
      secretsCheck: flags['secrets-check'],
      allowUnboundLogin: flags['allow-unbound-login'],
      queueAnyway: flags['queue-anyway'],
      confirm: ({question}) => confirmSpend(network, question, flags.yes),
      note: (line) => this.note(line),
      progress: startProgress,
      dryRun: flags['dry-run'],
      wait: waitRequest(flags),
      credits: flags.credits ? {idempotencyKey: flags['idempotency-key']} : undefined,
    })
    if ('dryRun' in posted) return this.renderDryRun(posted, upload.bytes.length)
    return this.render(posted)
  }

  /** Prints a posted job's report, its result when it has one, and ends as it went. */
  private render({report, failure}: Reported<PostReport> | Reported<CreditPostReport>): PostReport | CreditPostReport {
    const {network} = this.settings
    if (this.quiet) ux.stdout(report.job)
    const credits = 'credits' in report ? report.credits : null
    this.sayPlacement(report.placement)
    this.say(`Posted job ${report.job} on ${network}${credits ? ', paid by credits' : ''}`)
    const rows: [string, string][] = credits
      ? [['Credits', `${amountText(credits.charged)} held (${credits.manager})`]]
      : walletRows((report as PostReport).wallet)
    const lines = report.result ? rowsWithOutcome(report) : jobRows(report)
    lines.splice(1, 0, ...rows)
    for (const line of reportLines(lines)) this.say(line)
    const result = resultText(report)
    if (result !== null) {
      this.say()
      this.say(printable(result, process.stdout))
    }
    return this.failWithReport(report, failure)
  }

  private sayPlacement(placement: Placement | undefined): void {
    if (!placement) return
    for (const line of placementText(placement)) this.say(line)
    this.say()
  }

  private renderDryRun(report: DryRunReport, bytes: number): DryRunReport {
    this.say(`Dry run: the job can be posted on ${report.network}; nothing was uploaded or sent`)
    const rows: [string, string | null][] = [
      ['Network', report.network],
      ...walletRows(report.wallet),
      ['Market', report.market],
      ['Definition', report.definition],
      ['Price', `${amountText(report.pricePerSecond)}/s`],
      ['Timeout', `${report.timeout} s`],
      ['Total price', amountText(report.totalPrice)],
      ['Fees', `${amountText(report.fee)} (and ${amountText(report.rent)} rent for the job and run accounts)`],
      ['Secrets', report.secrets.length > 0 ? `${report.secrets.join(', ')} (stored)` : null],
      ['Checks', report.checks.map(({by, verdict}) => `${by}: ${verdict}`).join('; ')],
    ]
    for (const line of reportLines(rows)) this.say(line)
    if (report.placement) {
      this.say()
      for (const line of placementText(report.placement)) this.say(line)
    }
    this.say()
    this.say(`Uploaded as (${bytes} bytes):`)
    for (const line of JSON.stringify(report.uploaded, null, 2).split('\n')) this.say(`  ${line}`)
    return report
  }
}

/** The placement table, when placement chose the market: first in a report, so the market's why comes with it. */
function placementText(placement: Placement): string[] {
  const chosen = placement.markets.find((row) => row.chosen)
  return [
    `Placed on ${chosen?.slug ?? placement.chosen} (placement: fits, a free node, the price, the image):`,
    ...placementLines(placement).map((line) => `  ${line}`),
  ]
}

function walletRows({address, sol, tokens}: PostReport['wallet']): [string, string][] {
  return [
    ['Wallet', address],
    ['Balance', `${amountText(sol)}, ${amountText(tokens)}`],
  ]
}
