import * as Flags from '@oclif/core/flags'

import type {Interfaces} from '@oclif/core'
import {ux} from '@oclif/core/ux'

import {BaseCommand} from './base-command.js'
import {apiKeyFlag, managerFlag, marketFlag, marketFlags, networkFlags, waitFlags} from './flags.js'
import type {JobDefinition} from '../lib/definition/schema.js'
import type {NetworkCheck} from '../lib/definition/network-form/prepare.js'
import type {NetworkChange} from '../lib/definition/network-form/translate.js'
import type {NetworkDefinition} from '../lib/definition/network-form/types.js'
import type {PostableDefinition} from '../lib/definition/upload.js'
import {computeCidV0} from '../lib/ipfs/cid.js'
import type {GpunetError} from '../lib/errors.js'
import {defaultWaitPoint, jobEndedBadly, stoppedWaiting, waitForJob} from '../lib/job/follow.js'
import {checkSecretsStored, localnetRunProblem} from '../lib/job/preflight.js'
import type {WaitPoint} from '../lib/job/wait-point.js'
import {type AmountJson, amountJson} from '../lib/text/amounts.js'
import {readBalances, SOL_DECIMALS} from '../lib/market/balances.js'
import {confirmSpend} from '../lib/market/confirm.js'
import {type MarketNetwork, parseAddress} from '../lib/market/connect.js'
import {connectMarket} from '../lib/network-connection.js'
import {readJob} from '../lib/market/jobs.js'
import {inFlight, rpcCall} from '../lib/market/rpc.js'
import {TOKEN_DECIMALS} from '../lib/market/networks.js'
import {listJob, type PostQuote, quotePost} from '../lib/market/post.js'
import {type FeeJson, feeJson, feeText} from '../lib/market/send.js'
import {jobInfo, type JobInfo, resultText, rowsWithOutcome} from '../lib/market/job-result.js'
import {printable} from '../lib/text/terminal-text.js'
import {amountText, jobRows, reportLines} from '../lib/market/report.js'
import {exposedPorts} from '../lib/market/service-url.js'
import type {Network} from '../lib/network.js'
import {startProgress} from '../lib/terminal/progress.js'
import {openWallet, type Wallet} from '../lib/keys/wallet.js'
import {creditAmount, listWithCredits, newIdempotencyKey} from '../lib/credits/client.js'
import {connectManager} from '../lib/manager-connection.js'
import {PublicKey} from '@solana/web3.js'

interface WalletReport {
  address: string
  sol: AmountJson
  tokens: AmountJson
}

/** What `job post --json` prints: the job's report (with its result once `--wait` saw it end), the wallet's balances after posting, the signature. */
export interface PostReport extends JobInfo {
  wallet: WalletReport
  signature: string
  /** The transaction fee in SOL, priority fee included (also on stderr before it is sent). */
  fee: FeeJson
  /** What the poster should know, also printed on stderr: e.g. no localnet node can run this job (--queue-anyway). */
  warnings: string[]
}

/** What `job post --credits --json` prints: the job's report, what the network's API charged, the key it was sent with. */
export interface CreditPostReport extends JobInfo {
  signature: string
  credits: {
    /** Held for the job: its price x timeout, one token a credit on localnet; what it did not run comes back. */
    charged: AmountJson
    /** The API that listed it; its wallet is the job's project on the chain. */
    manager: string
    project: string | null
  }
  /** The Idempotency-Key the post was sent with: the same key and definition post it once, however often sent. */
  idempotencyKey: string
  warnings: string[]
}

/** What `job post --dry-run --json` prints: every check passed, the quote, and nothing uploaded or sent. */
export interface DryRunReport {
  dryRun: true
  network: Network
  wallet: WalletReport
  market: string
  /** The CIDv0 the definition would be stored under. */
  definition: string
  /** The definition as it would be uploaded: in the network's form (docs/networks.md). */
  uploaded: NetworkDefinition
  /** What the translation to the network's form changed. */
  changes: NetworkChange[]
  /** Every check the uploaded form passed, each with its verdict (the network's validator with its version). */
  checks: NetworkCheck[]
  pricePerSecond: AmountJson
  timeout: number
  totalPrice: AmountJson
  /** SOL for the transaction: signatures and priority fee (docs/networks.md), as every fee is printed. */
  fee: FeeJson
  /** SOL for the rent of the job account and of a run account. */
  rent: AmountJson
  /** The secrets the job refers to, each found in the poster's store (empty with --no-secrets-check). */
  secrets: string[]
  warnings: string[]
}

/** The flags of every command that posts a job (`job post`, `job run`), apart from where its definition comes from. */
export const postFlags = {
  market: marketFlag,
  timeout: Flags.integer({
    description: "seconds the job may run [default: the market's job timeout]",
    min: 1,
    helpValue: 'SECONDS',
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

/** The base of the commands that post a job: every check, the quote, the upload, the transaction, `--wait`. */
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
    if (flags.credits) return this.postWithCredits(flags, upload)
    const {network} = this.settings
    const note = (line: string) => this.note(line)
    const {document: definition, bytes} = upload
    const exposes = exposedPorts(definition).length > 0
    for (const {path, change} of upload.changes) this.note(`In the network's form: ${path} ${change}`)

    const net = await connectMarket(this.settings, note)
    const wallet = await openWallet(this.settings, {note})
    // --market names the market to post to; the setting's other layers make the network's default market (on
    // localnet, the localnet's own), which the localnet's node serves.
    const given = this.settings.get('market')
    const market = given?.from === 'flag' ? parseAddress(given.value, 'the market') : net.defaultMarket
    const jobWarnings = this.checkRunnable(
      net,
      market.equals(net.defaultMarket),
      upload.runnable,
      flags['queue-anyway'],
    )
    // The secrets service and the chain are asked side by side; a missing secret is still reported first.
    const stored = inFlight(
      flags['secrets-check']
        ? checkSecretsStored(definition, this.settings, {allowUnboundLogin: flags['allow-unbound-login'], note})
        : Promise.resolve([]),
    )
    const timeout = flags.timeout === undefined ? undefined : BigInt(flags.timeout)
    const quoted = inFlight(quotePost(net, wallet, market, computeCidV0(bytes).cid, timeout))
    const secrets = await stored
    const quote = await quoted
    const total = amountJson(quote.total, TOKEN_DECIMALS, 'token')
    if (flags['dry-run']) return this.dryRun(network, wallet, quote, secrets, jobWarnings, upload)
    this.note(`Transaction fee: ${feeText(quote.fee)}`)
    await confirmSpend(network, `Post this job on ${network} for ${amountText(total)} (${quote.timeout} s)?`, flags.yes)

    const progress = startProgress(`Uploading the definition to ${net.content().url}`)
    let posted
    try {
      await net.content().add(bytes)
      progress.update(`Posting the job on ${network} (${amountText(total)})`)
      posted = await listJob(net, quote)
    } finally {
      progress.stop()
    }

    const wait = flags.wait || flags['wait-for'] !== undefined
    // Stopped waiting (a signal, the deadline): the job goes on, and its report says where it is.
    let waitStopped: GpunetError | null = null
    const waited = wait
      ? await waitForJob(net, posted.job, {
          until: (flags['wait-for'] as WaitPoint | undefined) ?? defaultWaitPoint(definition),
          timeoutSeconds: flags['wait-timeout'],
          definition,
          logs: flags.logs ? {wallet: async () => wallet} : undefined,
        }).catch((error: unknown) => {
          if (!stoppedWaiting(error)) throw error
          waitStopped = error
          return null
        })
      : null
    if (exposes && network === 'localnet' && !net.gatewayUrl) {
      this.note('No service URL: the localnet runs no gateway for exposed ports yet.')
    }
    // The job (unless --wait has just read it) and the wallet, side by side.
    const [view, balances] = await Promise.all([
      waited ?? readJob(net.connection, net.programId, posted.job, posted.run),
      rpcCall(net.connection, () => readBalances(net.connection, wallet.publicKey, net.mint)),
    ])
    const report: PostReport = {
      ...(await jobInfo(net, view, definition)),
      wallet: walletReport(wallet, balances.lamports, balances.tokens),
      signature: posted.signature,
      fee: feeJson(posted.fee),
      warnings: jobWarnings,
    }
    if (this.quiet) ux.stdout(report.job)
    this.say(`Posted job ${report.job} on ${network}`)
    const rows = report.result ? rowsWithOutcome(report) : jobRows(report)
    rows.splice(
      1,
      0,
      ['Wallet', report.wallet.address],
      ['Balance', `${amountText(report.wallet.sol)}, ${amountText(report.wallet.tokens)}`],
    )
    for (const line of reportLines(rows)) this.say(line)
    const result = resultText(report)
    if (result !== null) {
      this.say()
      this.say(printable(result, process.stdout))
    }
    return this.failWithReport(report, waitStopped ?? (wait ? jobEndedBadly(network, report) : null))
  }

  /**
   * Posts through the network's API, paid by credits: the definition uploaded as for any post, then `/api/jobs/list`
   * with one Idempotency-Key for every try. The API's wallet lists it (its project), so its node's live lines,
   * which only the project may read, are not followed.
   */
  private async postWithCredits(flags: PostFlags, upload: PostableDefinition['upload']): Promise<CreditPostReport> {
    const {network} = this.settings
    const note = (line: string) => this.note(line)
    const {document: definition, bytes} = upload
    for (const {path, change} of upload.changes) this.note(`In the network's form: ${path} ${change}`)
    const net = await connectMarket(this.settings, note)
    const api = await connectManager(this.settings, {note})
    const given = this.settings.get('market')
    const market = given?.from === 'flag' ? parseAddress(given.value, 'the market') : net.defaultMarket
    const warnings = this.checkRunnable(net, market.equals(net.defaultMarket), upload.runnable, flags['queue-anyway'])
    const key = flags['idempotency-key'] ?? newIdempotencyKey()
    const timeout = flags.timeout
    await confirmSpend(
      network,
      `Post this job on ${network} paid by credits (${timeout === undefined ? "the market's timeout" : `${timeout} s`})?`,
      flags.yes,
    )
    const {cid} = computeCidV0(bytes)
    const progress = startProgress(`Uploading the definition to ${net.content().url}`)
    let answer
    try {
      await net.content().add(bytes)
      progress.update(`Posting the job on ${network} with credits (${api.url})`)
      answer = await listWithCredits(api.client, {ipfsHash: cid, market: market.toBase58(), timeout}, key)
    } finally {
      progress.stop()
    }
    const job = new PublicKey(answer.job)
    const wait = flags.wait || flags['wait-for'] !== undefined
    let waitStopped: GpunetError | null = null
    const waited = wait
      ? await waitForJob(net, job, {
          until: (flags['wait-for'] as WaitPoint | undefined) ?? defaultWaitPoint(definition),
          timeoutSeconds: flags['wait-timeout'],
          definition,
        }).catch((error: unknown) => {
          if (!stoppedWaiting(error)) throw error
          waitStopped = error
          return null
        })
      : null
    const view = waited ?? (await readJob(net.connection, net.programId, job))
    const report: CreditPostReport = {
      ...(await jobInfo(net, view, definition)),
      signature: answer.tx,
      credits: {
        charged: creditAmount(answer.credits.creditsUsed),
        manager: api.url,
        project: answer.credits.project ?? null,
      },
      idempotencyKey: key,
      warnings,
    }
    if (this.quiet) ux.stdout(report.job)
    this.say(`Posted job ${report.job} on ${network}, paid by credits`)
    const rows = report.result ? rowsWithOutcome(report) : jobRows(report)
    rows.splice(1, 0, ['Credits', `${amountText(report.credits.charged)} held (${api.url})`])
    for (const line of reportLines(rows)) this.say(line)
    const result = resultText(report)
    if (result !== null) {
      this.say()
      this.say(printable(result, process.stdout))
    }
    return this.failWithReport(report, waitStopped ?? (wait ? jobEndedBadly(network, report) : null))
  }

  /** On localnet, refuses (exit 5) a job its node would never run, or with --queue-anyway warns about it. */
  private checkRunnable(
    net: MarketNetwork,
    defaultMarket: boolean,
    definition: JobDefinition | null,
    queueAnyway: boolean,
  ): string[] {
    // The localnet's node serves its default market only; another market's nodes are not known here.
    if (net.localnetNode === undefined || !defaultMarket || !definition) return []
    const problem = localnetRunProblem(net.localnetNode, definition)
    if (!problem) return []
    if (!queueAnyway) throw problem
    this.note(`Warning: ${problem.message} (--queue-anyway)`)
    return [problem.message]
  }

  private dryRun(
    network: Network,
    wallet: Wallet,
    quote: PostQuote,
    secrets: string[],
    warnings: string[],
    upload: PostableDefinition['upload'],
  ): DryRunReport {
    const tokens = (units: bigint) => amountJson(units, TOKEN_DECIMALS, 'token')
    const sol = (units: bigint) => amountJson(units, SOL_DECIMALS, 'SOL')
    const report: DryRunReport = {
      dryRun: true,
      network,
      wallet: walletReport(wallet, quote.balances.lamports, quote.balances.tokens),
      market: quote.market.toBase58(),
      definition: quote.cid,
      uploaded: upload.document,
      changes: upload.changes,
      checks: upload.checks,
      pricePerSecond: tokens(quote.pricePerSecond),
      timeout: Number(quote.timeout),
      totalPrice: tokens(quote.total),
      fee: feeJson(quote.fee),
      rent: sol(quote.rent),
      secrets,
      warnings,
    }
    this.say(`Dry run: the job can be posted on ${network}; nothing was uploaded or sent`)
    const rows: [string, string | null][] = [
      ['Network', network],
      ['Wallet', report.wallet.address],
      ['Balance', `${amountText(report.wallet.sol)}, ${amountText(report.wallet.tokens)}`],
      ['Market', report.market],
      ['Definition', report.definition],
      ['Price', `${amountText(report.pricePerSecond)}/s`],
      ['Timeout', `${report.timeout} s`],
      ['Total price', amountText(report.totalPrice)],
      ['Fees', `${amountText(report.fee)} (and ${amountText(report.rent)} rent for the job and run accounts)`],
      ['Secrets', secrets.length > 0 ? `${secrets.join(', ')} (stored)` : null],
      ['Checks', report.checks.map(({by, verdict}) => `${by}: ${verdict}`).join('; ')],
    ]
    for (const line of reportLines(rows)) this.say(line)
    this.say()
    this.say(`Uploaded as (${upload.bytes.length} bytes):`)
    for (const line of JSON.stringify(report.uploaded, null, 2).split('\n')) this.say(`  ${line}`)
    return report
  }
}

function walletReport(wallet: Wallet, lamports: bigint, tokens: bigint): WalletReport {
  return {
    address: wallet.address,
    sol: amountJson(lamports, SOL_DECIMALS, 'SOL'),
    tokens: amountJson(tokens, TOKEN_DECIMALS, 'token'),
  }
}
