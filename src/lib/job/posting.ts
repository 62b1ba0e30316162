/**
 * The one posting workflow, shared by `job post`, `job run` and the library's postJob: the checks made before
 * anything is paid (on localnet a node runs it, the secrets it refers to are stored, the wallet pays), the quote,
 * the caller's confirmation, the upload and `list`; for the commands, then `--wait` and the report's data. With
 * credits, the network's API lists the job instead of the wallet.
 */
import {PublicKey} from '@solana/web3.js'

import {creditAmount, listWithCredits, newIdempotencyKey} from '../credits/client.js'
import type {NetworkCheck, PreparedUpload} from '../definition/network-form/prepare.js'
import type {NetworkChange} from '../definition/network-form/translate.js'
import type {NetworkDefinition} from '../definition/network-form/types.js'
import type {JobDefinition} from '../definition/schema.js'
import type {GpunetError} from '../errors.js'
import {computeCidV0} from '../ipfs/cid.js'
import {openWallet, type Wallet} from '../keys/wallet.js'
import {connectManager} from '../manager-connection.js'
import {type AmountJson, amountJson} from '../text/amounts.js'
import {readBalances, SOL_DECIMALS} from '../market/rpc/balances.js'
import type {MarketNetwork} from '../market/connect.js'
import {jobInfo, type JobInfo} from '../market/jobs/job-info.js'
import {readJob} from '../market/jobs/jobs.js'
import {TOKEN_DECIMALS} from '../market/networks.js'
import {listJob, type PostQuote, quotePost} from '../market/jobs/post.js'
import {amountText} from '../market/jobs/report.js'
import {inFlight, rpcCall} from '../market/rpc/rpc.js'
import {type FeeJson, feeJson, type FeeQuote, feeText} from '../market/rpc/send.js'
import {exposedPorts} from '../market/service-url.js'
import type {Network} from '../network.js'
import {connectMarket} from '../network-connection.js'
import type {Settings} from '../settings/settings.js'
import type {Progress} from '../terminal/progress.js'
import {followIfAsked, type WaitRequest} from './follow.js'
import {checkSecretsStored, localnetRunProblem} from './preflight.js'
import {chooseMarket, jobNeed, type NeedInput, parseNeed} from './placing.js'
import {needAsks, type Placement, type PlacementNeed} from '../market/jobs/placement.js'
import {failOver, type MoveEvent, settleMoves} from './failover/moving.js'
import {checkQueueTimeout} from './failover/steps.js'

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
  /** How placement chose the market (only when it ran: a need and no explicit market; docs/jobs.md). */
  placement?: Placement
  /** With a queue timeout: each move from a market where the job waited too long (docs/jobs.md, "Failover"). */
  moves?: MoveEvent[]
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
  placement?: Placement
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
  placement?: Placement
}

/** What the caller is asked to consent to before anything is uploaded or paid. */
export interface PostSpend {
  network: Network
  /** The question a terminal asks: where, and for how much. */
  question: string
  /** The deposit (price x timeout) and the transaction's fee, when the wallet pays. */
  totalPrice?: AmountJson
  fee?: FeeJson
}

/** How to post: every check's switch, the caller's consent, and where the way's notes go. */
export interface PostOptions {
  /** The market (default: the network's default market, which on localnet is the one its node serves). */
  market?: PublicKey
  /**
   * What the job needs of a market (docs/jobs.md, "Placement"): with no `market`, placement picks the market that
   * fits; with one, it is checked against the need (a warning, exit 3 with `strict`). The definition's
   * `required_vram` counts too.
   */
  need?: NeedInput
  /** Seconds the job may run (default: the market's job timeout). */
  timeout?: number
  /**
   * Seconds the job may wait QUEUED on a market before it moves to the next that fits (docs/jobs.md, "Failover"):
   * the post then waits until it runs. At least a minute, at most the market's job timeout; not with credits.
   */
  queueTimeout?: number
  /** Where the failover's test crash points are read (deployments/crash-points.ts): none unless given. */
  crashEnv?: NodeJS.ProcessEnv
  /** Check that every secret the job refers to is stored (default: on). */
  secretsCheck?: boolean
  /** See SecretsClientOptions. */
  allowUnboundLogin?: boolean
  /** On localnet, post a job that no localnet node would run, with a warning, instead of refusing it (exit 5). */
  queueAnyway?: boolean
  /** Asked before anything is uploaded or paid; refuses by throwing. Without it, posting is the consent. */
  confirm?: (spend: PostSpend) => Promise<void>
  /** Told the way's notes and warnings (stderr in commands). */
  note: (line: string) => void
  /** Shows the upload and the transaction under way (a spinner in commands). */
  progress: (text: string) => Progress
}

/** A definition every check passed, priced: the quote, the secrets found stored, the warnings. */
export interface CheckedPost {
  quote: PostQuote
  secrets: string[]
  warnings: string[]
  placement?: Placement
  /** What the job needs of a market: where a failover may move it. */
  need: PlacementNeed
}

/** A job the wallet listed, with what its checks found. */
export interface ListedJob {
  checked: CheckedPost
  job: PublicKey
  run: PublicKey
  signature: string
  fee: FeeQuote
}

/** A report and the error the command ends with once it is printed (a `--wait` that stopped, or saw it fail). */
export interface Reported<T> {
  report: T
  failure: GpunetError | null
}

/**
 * Every check before paying: on localnet a node runs it (see runnableWarnings), then the secrets it refers to are
 * looked up while the chain prices it and the wallet's balance is checked (exit 3 or 4, nothing uploaded or sent).
 */
export async function checkAndQuote(
  settings: Settings,
  net: MarketNetwork,
  wallet: Wallet,
  upload: PreparedUpload,
  options: PostOptions,
): Promise<CheckedPost> {
  // Placement first: it picks the market the rest checks and prices (nothing asked of the wallet before it).
  const need = postNeed(upload, options)
  const choice = await placeIfAsked(net, upload, options, 'token', need)
  const market = choice?.market ?? marketOf(net, options.market)
  const warnings = [...(choice?.warnings ?? []), ...runnableWarnings(net, market, upload.runnable, options)]
  const {note, allowUnboundLogin} = options
  // The secrets service and the chain are asked side by side; a missing secret is still reported first.
  const stored = inFlight(
    options.secretsCheck === false
      ? Promise.resolve([])
      : checkSecretsStored(upload.document, settings, {allowUnboundLogin, note, wallet}),
  )
  const timeout = options.timeout === undefined ? undefined : BigInt(options.timeout)
  const quoted = inFlight(quotePost(net, wallet, market, computeCidV0(upload.bytes).cid, timeout))
  const secrets = await stored
  return {quote: await quoted, secrets, warnings, need, ...(choice?.placement ? {placement: choice.placement} : {})}
}

/** Asks the caller's consent for the quote, uploads the definition and sends the quoted `list` once. */
export async function listChecked(
  net: MarketNetwork,
  upload: PreparedUpload,
  checked: CheckedPost,
  options: PostOptions,
): Promise<ListedJob> {
  const {quote} = checked
  const network = net.name
  const total = amountJson(quote.total, TOKEN_DECIMALS, 'token')
  options.note(`Transaction fee: ${feeText(quote.fee)}`)
  await options.confirm?.({
    network,
    question: `Post this job on ${network} for ${amountText(total)} (${quote.timeout} s)?`,
    totalPrice: total,
    fee: feeJson(quote.fee),
  })
  const progress = options.progress(`Uploading the definition to ${net.content().url}`)
  try {
    await net.content().add(upload.bytes)
    progress.update(`Posting the job on ${network} (${amountText(total)})`)
    return {checked, ...(await listJob(net, quote))}
  } finally {
    progress.stop()
  }
}

/** How `job post` and `job run` post: the checks' switches, `--dry-run`, `--wait`, and `--credits`. */
export type PostRequest = PostOptions & {
  dryRun: boolean
  wait: WaitRequest | null
  /** Paid by credits of the network's API, sent with this Idempotency-Key (a new one when none). */
  credits?: {idempotencyKey?: string}
}

/**
 * `job post` and `job run`: connects as the settings say, checks and quotes, and unless `dryRun` lists the job
 * (paid by the wallet, or by credits), follows it when asked and reports it.
 */
export function postUpload(
  settings: Settings,
  upload: PreparedUpload,
  request: PostRequest,
): Promise<DryRunReport | Reported<PostReport> | Reported<CreditPostReport>> {
  return request.credits
    ? postWithCredits(settings, upload, {...request, idempotencyKey: request.credits.idempotencyKey})
    : postDefinition(settings, upload, request)
}

async function postDefinition(
  settings: Settings,
  upload: PreparedUpload,
  options: PostOptions & {dryRun: boolean; wait: WaitRequest | null},
): Promise<DryRunReport | Reported<PostReport>> {
  const {note} = options
  noteChanges(upload, note)
  const net = await connectMarket(settings, note)
  const wallet = await openWallet(settings, {note})
  // A move a killed post left half done is finished (or rolled back) before anything else is paid; a dry run sends
  // nothing, so it leaves them to the next command.
  const env = options.crashEnv ?? {}
  if (!options.dryRun)
    await settleMoves({net, wallet: async () => wallet, env, dataDir: settings.dataDir, note, project: wallet.address})
  const checked = await checkAndQuote(settings, net, wallet, upload, options)
  const scale = settings.typed('queueTimeoutScale')?.value ?? 1
  if (options.queueTimeout !== undefined) {
    const marketJobTimeout = Number(checked.quote.marketAccount.jobTimeout)
    checkQueueTimeout(options.queueTimeout, {marketJobTimeout, credits: false, network: net.name, scale})
  }
  if (options.dryRun) return dryRunReport(net.name, wallet, upload, checked)
  const listed = await listChecked(net, upload, checked, options)
  const definition = upload.document
  const moved =
    options.queueTimeout === undefined
      ? null
      : await failOver(
          net,
          wallet,
          {...listed, market: checked.quote.market},
          {
            queueTimeout: options.queueTimeout,
            scale,
            need: checked.need,
            cid: checked.quote.cid,
            timeout: options.timeout ?? null,
            dataDir: settings.dataDir,
            env,
            note,
          },
        )
  const job = moved?.job ?? listed.job
  const followed = await followIfAsked(net, job, options.wait, {definition, wallet: async () => wallet})
  if (exposedPorts(definition).length > 0 && net.name === 'localnet' && !net.gatewayUrl) {
    note('No service URL: the localnet runs no gateway for exposed ports yet.')
  }
  // The job (unless --wait has just read it) and the wallet, side by side.
  const [view, balances] = await Promise.all([
    followed.view ?? readJob(net.connection, net.programId, job, job.equals(listed.job) ? listed.run : undefined),
    rpcCall(net.connection, () => readBalances(net.connection, wallet.publicKey, net.mint)),
  ])
  const report: PostReport = {
    ...(await jobInfo(net, view, definition)),
    wallet: walletReport(wallet, balances.lamports, balances.tokens),
    signature: moved?.signature ?? listed.signature,
    fee: feeJson(listed.fee),
    warnings: checked.warnings,
    ...(checked.placement ? {placement: checked.placement} : {}),
    ...(moved ? {moves: moved.moves} : {}),
  }
  return {report, failure: followed.failure(report)}
}

/**
 * Posts through the network's API, paid by credits: the definition checked and uploaded as for any post, then
 * `/api/jobs/list` with one Idempotency-Key for every try. The API's wallet lists it (its project), so neither
 * this wallet's secrets nor its node's live lines, which only the project may read, come into it.
 */
async function postWithCredits(
  settings: Settings,
  upload: PreparedUpload,
  options: PostOptions & {idempotencyKey?: string; wait: WaitRequest | null},
): Promise<Reported<CreditPostReport>> {
  const {note, timeout} = options
  if (options.queueTimeout !== undefined) {
    checkQueueTimeout(options.queueTimeout, {
      marketJobTimeout: Infinity,
      credits: true,
      network: settings.network,
      scale: 1,
    })
  }
  noteChanges(upload, note)
  const net = await connectMarket(settings, note)
  const choice = await placeIfAsked(net, upload, options, 'credits')
  const api = await connectManager(settings, {note})
  const market = choice?.market ?? marketOf(net, options.market)
  const warnings = [...(choice?.warnings ?? []), ...runnableWarnings(net, market, upload.runnable, options)]
  const key = options.idempotencyKey ?? newIdempotencyKey()
  const network = net.name
  await options.confirm?.({
    network,
    question: `Post this job on ${network} paid by credits (${timeout === undefined ? "the market's timeout" : `${timeout} s`})?`,
  })
  const {cid} = computeCidV0(upload.bytes)
  const progress = options.progress(`Uploading the definition to ${net.content().url}`)
  let answer
  try {
    await net.content().add(upload.bytes)
    progress.update(`Posting the job on ${network} with credits (${api.url})`)
    answer = await listWithCredits(api.client, {ipfsHash: cid, market: market.toBase58(), timeout}, key)
  } finally {
    progress.stop()
  }
  const job = new PublicKey(answer.job)
  const definition = upload.document
  const followed = await followIfAsked(net, job, options.wait, {definition})
  const view = followed.view ?? (await readJob(net.connection, net.programId, job))
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
    ...(choice?.placement ? {placement: choice.placement} : {}),
  }
  return {report, failure: followed.failure(report)}
}

/**
 * On localnet, refuses (exit 5) a job its node would never run, or with `queueAnyway` notes it and answers it as a
 * warning; elsewhere no warnings.
 */
export function runnableWarnings(
  net: Pick<MarketNetwork, 'localnetNode' | 'defaultMarket' | 'localnetMarkets'>,
  market: PublicKey,
  definition: JobDefinition | null,
  options: Pick<PostOptions, 'queueAnyway' | 'note'>,
): string[] {
  if (net.localnetNode === undefined || !definition) return []
  // Every market the localnet opened has its own nodes, checked alike; one opened by hand has none it knows of.
  const markets = net.localnetMarkets ?? [{address: net.defaultMarket.toBase58(), slug: 'localnet', nodes: 1}]
  const served = markets.find((m) => m.address === market.toBase58())
  if (!served) return []
  const problem = localnetRunProblem(net.localnetNode, definition, served)
  if (!problem) return []
  if (!options.queueAnyway) throw problem
  options.note(`Warning: ${problem.message} (--queue-anyway)`)
  return [problem.message]
}

/** The need of the flags and of the definition; a bad flag is exit 2 before the chain is asked anything. */
function postNeed(upload: PreparedUpload, options: PostOptions): PlacementNeed {
  return jobNeed(parseNeed(options.need ?? {}), upload.document as unknown as Record<string, unknown>)
}

/** The market placement chose, or the explicit one checked against the need; null with no need (as before). */
async function placeIfAsked(
  net: MarketNetwork,
  upload: PreparedUpload,
  options: PostOptions,
  payment: 'token' | 'credits',
  need = postNeed(upload, options),
): ReturnType<typeof chooseMarket> {
  const flags = parseNeed(options.need ?? {})
  return chooseMarket(net, {
    explicit: options.market ?? null,
    need,
    payment,
    strict: options.need?.strict ?? false,
    flagsAsked: needAsks({...flags, images: []}),
    note: options.note,
  })
}

function marketOf(net: MarketNetwork, market: PublicKey | undefined): PublicKey {
  return market ?? net.defaultMarket
}

function noteChanges(upload: PreparedUpload, note: (line: string) => void): void {
  for (const {path, change} of upload.changes) note(`In the network's form: ${path} ${change}`)
}

function dryRunReport(network: Network, wallet: Wallet, upload: PreparedUpload, checked: CheckedPost): DryRunReport {
  const {quote} = checked
  const tokens = (units: bigint) => amountJson(units, TOKEN_DECIMALS, 'token')
  return {
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
    rent: amountJson(quote.rent, SOL_DECIMALS, 'SOL'),
    secrets: checked.secrets,
    warnings: checked.warnings,
    ...(checked.placement ? {placement: checked.placement} : {}),
  }
}

function walletReport(wallet: Wallet, lamports: bigint, tokens: bigint): WalletReport {
  return {
    address: wallet.address,
    sol: amountJson(lamports, SOL_DECIMALS, 'SOL'),
    tokens: amountJson(tokens, TOKEN_DECIMALS, 'token'),
  }
}
