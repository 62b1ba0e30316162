/**
 * Listing a poster's jobs (reference/network-job-plane.md §5): from an indexer's `GET /jobs/` (the network's, or
 * the localnet's own), or from the chain with `getProgramAccounts` (`--source chain`), which only knows the jobs
 * whose accounts still exist.
 */
import {PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import {ExitCode, GpunetError} from '../../errors.js'
import {httpFetch} from '../../http/client.js'
import {
  decodeJobAccount,
  decodeRunAccount,
  JOB_ACCOUNT_DISCRIMINATOR,
  type JobAccount,
  JobState,
  RUN_ACCOUNT_DISCRIMINATOR,
} from '../codec/accounts.js'
import {type AmountJson, amountJson} from '../../text/amounts.js'
import type {Outcome} from '../../results/outcome.js'
import {readResult} from '../../results/job-result.js'
import {alignedColumns, amountText, isoTime, settledOutcome} from './report.js'
import type {JobInfo} from './job-info.js'
import type {Network} from '../../network.js'
import type {MarketNetwork} from '../connect.js'
import {bytesToIpfsHash} from '../codec/ipfs-hash.js'
import {TOKEN_DECIMALS} from '../networks.js'
import {rpcCall} from '../rpc/rpc.js'

export type IndexedJobState = 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'STOPPED'
export const JOB_LIST_STATES: readonly IndexedJobState[] = ['QUEUED', 'RUNNING', 'COMPLETED', 'STOPPED']

/** A job as an indexer lists it (times in unix seconds, 0 when not yet; price in token base units per second). */
export interface IndexedJob {
  address: string
  state: IndexedJobState
  market: string
  node: string | null
  project: string
  payer: string
  price: string
  timeout: number
  timeStart: number
  timeEnd: number
  ipfsJob: string
  ipfsResult: string | null
  /** Its account is gone (delisted, or cleaned after it ended): only an indexer still knows it. */
  closed?: boolean
  /** It was delisted while queued (listed as STOPPED). */
  delisted?: boolean
}

/** A row of `job list`: address, state, outcome, market, start, duration and cost. */
export interface ListedJob {
  job: string
  state: IndexedJobState
  /** How it went (docs/json.md, "States and outcomes"); null while it runs, or when its result cannot be read. */
  outcome: Outcome | null
  market: string
  node: string | null
  startedAt: string | null
  durationSeconds: number | null
  cost: AmountJson
  definition: string
  result: string | null
}

export interface JobListQuery {
  poster: string
  state?: IndexedJobState
  market?: string
  node?: string
  /** Only jobs that ended this way: read from the jobs themselves, as the indexer knows no outcomes. */
  outcome?: Outcome
  limit: number
  offset: number
}

export interface JobListPage {
  source: 'indexer' | 'chain'
  jobs: ListedJob[]
  /** How many jobs match in all (every page); null when an outcome filter stopped reading before the last job. */
  total: number | null
  /** More jobs match after this page. */
  more: boolean
}

export const JOB_OUTCOMES: readonly Outcome[] = ['succeeded', 'failed', 'stopped']

/** The most jobs one indexer page holds. */
export const MAX_LIST_LIMIT = 50

/** Byte offsets in a JobAccount (after the 8-byte discriminator), for getProgramAccounts filters. */
const OFFSET = {market: 72, node: 104, project: 176, state: 208}

/** Results read at once for the outcomes of one page: a page holds at most 50. */
const RESULT_READS = 4

/**
 * Jobs the outcome filter reads at most (pages of 50 from the indexer, which allows about 20 requests in 30 s):
 * past them the total is unknown and the next page is asked for with --offset.
 */
export const OUTCOME_SCAN_LIMIT = 500

/** One page of the poster's jobs, newest first, each with its outcome (a done job's read from its result). */
export async function listJobs(
  net: MarketNetwork,
  query: JobListQuery,
  source: 'indexer' | 'chain',
  nowSeconds = Date.now() / 1000,
): Promise<JobListPage> {
  const fetchPage = (page: JobListQuery) =>
    source === 'indexer' ? fromIndexer(net.indexerUrl, page) : fromChain(net, page)
  if (query.outcome) return listByOutcome(net, {...query, outcome: query.outcome}, fetchPage, source, nowSeconds)
  const page = await fetchPage(query)
  const jobs = page.jobs.map((job) => listedJob(job, nowSeconds))
  await readOutcomes(net, jobs)
  return {source, total: page.total, more: query.offset + jobs.length < page.total, jobs}
}

/** Reads one page of indexed jobs (from the indexer or the chain). */
export type PageFetch = (query: JobListQuery) => Promise<{jobs: IndexedJob[]; total: number}>

/**
 * A page of the jobs that ended one way. The indexer filters by chain state only, and a running job its poster
 * stopped is COMPLETED on chain, so the poster's jobs are read newest first (only the states that can end that way)
 * and filtered here, until the page is full and one more match shows there are more.
 */
export async function listByOutcome(
  net: Pick<MarketNetwork, 'content'>,
  query: JobListQuery & {outcome: Outcome},
  fetchPage: PageFetch,
  source: 'indexer' | 'chain',
  nowSeconds: number,
): Promise<JobListPage> {
  const states: IndexedJobState[] = query.outcome === 'stopped' ? ['COMPLETED', 'STOPPED'] : ['COMPLETED']
  const state = query.state && states.includes(query.state) ? query.state : states.length === 1 ? states[0] : undefined
  const matches: ListedJob[] = []
  if (query.state && !states.includes(query.state)) return {source, jobs: [], total: 0, more: false}
  const wanted = query.offset + query.limit + 1
  let read = 0
  let exhausted = false
  while (matches.length < wanted && read < OUTCOME_SCAN_LIMIT) {
    const page = await fetchPage({...query, state, offset: read, limit: MAX_LIST_LIMIT})
    const jobs = page.jobs.map((job) => listedJob(job, nowSeconds)).filter((job) => states.includes(job.state))
    await readOutcomes(net, jobs)
    matches.push(...jobs.filter((job) => job.outcome === query.outcome))
    read += page.jobs.length
    if (page.jobs.length < MAX_LIST_LIMIT || read >= page.total) {
      exhausted = true
      break
    }
  }
  const jobs = matches.slice(query.offset, query.offset + query.limit)
  return {source, jobs, total: exhausted ? matches.length : null, more: matches.length > query.offset + jobs.length}
}

/** Fills in the outcome of each COMPLETED job with a result, read from it a few at a time. */
async function readOutcomes(net: Pick<MarketNetwork, 'content'>, jobs: ListedJob[]): Promise<void> {
  const pending = jobs.filter((job) => job.state === 'COMPLETED' && job.result !== null)
  if (pending.length === 0) return
  const content = net.content()
  const readers = Array.from({length: Math.min(RESULT_READS, pending.length)}, async () => {
    for (let job = pending.shift(); job; job = pending.shift()) {
      // A result that cannot be read leaves the outcome unknown (null): the list is still worth printing.
      const fields = await readResult(content, job).catch(() => null)
      job.outcome = fields?.outcome ?? null
    }
  })
  await Promise.all(readers)
}

/** The row of an indexed job: the run's duration (so far, for a running job) and its cost, capped at the timeout. */
export function listedJob(job: IndexedJob, nowSeconds: number): ListedJob {
  const started = job.timeStart > 0 ? job.timeStart : null
  const ended = job.timeEnd > 0 ? job.timeEnd : null
  const duration =
    started === null
      ? null
      : Math.max(0, Math.floor((ended ?? (job.state === 'RUNNING' ? nowSeconds : started)) - started))
  const billed = BigInt(Math.min(duration ?? 0, job.timeout))
  return {
    job: job.address,
    state: job.state,
    outcome: settledOutcome(job.state, job.ipfsResult, null),
    market: job.market,
    node: job.node,
    startedAt: started === null ? null : isoTime(started),
    durationSeconds: duration,
    cost: amountJson(BigInt(job.price) * billed, TOKEN_DECIMALS, 'token'),
    definition: job.ipfsJob,
    result: job.ipfsResult,
  }
}

/** Pages of the poster's STOPPED jobs a `job get` of a closed account searches (the indexer allows 20 requests in 30 s). */
const CLOSED_SEARCH_PAGES = 2

/**
 * A job whose account is closed, as the indexer keeps it: a delisted job, which `job list` shows STOPPED, so `job
 * get` shows it too. Searched among the poster's newest STOPPED jobs; null when not there or the indexer fails.
 */
export async function findClosedJob(net: MarketNetwork, address: string, poster: string): Promise<IndexedJob | null> {
  for (let page = 0; page < CLOSED_SEARCH_PAGES; page++) {
    const query = {poster, state: 'STOPPED' as const, limit: MAX_LIST_LIMIT, offset: page * MAX_LIST_LIMIT}
    const found = await fromIndexer(net.indexerUrl, query).catch(() => null)
    const job = found?.jobs.find((listed) => listed.address === address)
    if (job) return job
    if (!found || found.jobs.length < MAX_LIST_LIMIT) return null
  }
  return null
}

/** The report of a closed job, from what the indexer keeps of it: no service URL, stopped. */
export function closedJobReport(network: Network, job: IndexedJob, nowSeconds: number): JobInfo {
  const listed = listedJob(job, nowSeconds)
  const tokens = (units: bigint) => amountJson(units, TOKEN_DECIMALS, 'token')
  return {
    network,
    job: job.address,
    state: job.state,
    status: job.state,
    market: job.market,
    definition: job.ipfsJob,
    project: job.project,
    pricePerSecond: tokens(BigInt(job.price)),
    timeout: job.timeout,
    totalPrice: tokens(BigInt(job.price) * BigInt(job.timeout)),
    serviceUrls: [],
    deploymentUrls: [],
    node: job.node,
    startedAt: listed.startedAt,
    endedAt: job.timeEnd > 0 ? isoTime(job.timeEnd) : null,
    durationSeconds: listed.durationSeconds,
    cost: listed.cost,
    costSoFar: listed.cost,
    result: job.ipfsResult,
    outcome: listed.outcome,
    failure: null,
    timedOut: false,
    resultView: null,
    resultContent: null,
  }
}

/**
 * `job list` as aligned columns under a header: address, state, outcome, market, start, duration, cost. `shown`
 * makes each cell as it will be printed (a terminal's without control sequences) before the widths are measured,
 * so a cell an indexer filled with them does not push the columns after it out of line.
 */
export function jobListRows(jobs: ListedJob[], shown: (cell: string) => string = (cell) => cell): string[] {
  if (jobs.length === 0) return []
  const rows = [
    ['ADDRESS', 'STATE', 'OUTCOME', 'MARKET', 'START', 'DURATION', 'COST'],
    ...jobs.map((job) => [
      job.job,
      job.state,
      job.outcome ?? '-',
      job.market,
      job.startedAt?.replace('T', ' ').replace(/\.\d+Z$/, 'Z') ?? '-',
      job.durationSeconds === null ? '-' : `${job.durationSeconds} s`,
      amountText(job.cost),
    ]),
  ]
  return alignedColumns(rows.map((row) => row.map(shown)))
}

/** A job account (and its open run) in the indexer's shape. */
export function indexedJob(address: string, job: JobAccount, run: {node: string; time: number} | null): IndexedJob {
  const zero = (bytes: Uint8Array) => bytes.every((b) => b === 0)
  const state: IndexedJobState =
    job.state === JobState.DONE ? 'COMPLETED' : job.state === JobState.STOPPED ? 'STOPPED' : run ? 'RUNNING' : 'QUEUED'
  return {
    address,
    state,
    market: job.market.toBase58(),
    node: run?.node ?? (zero(job.node.toBytes()) ? null : job.node.toBase58()),
    project: job.project.toBase58(),
    payer: job.payer.toBase58(),
    price: job.price.toString(),
    timeout: Number(job.timeout),
    timeStart: run ? run.time : Number(job.timeStart),
    timeEnd: Number(job.timeEnd),
    ipfsJob: bytesToIpfsHash(job.ipfsJob),
    ipfsResult: zero(job.ipfsResult) ? null : bytesToIpfsHash(job.ipfsResult),
  }
}

async function fromIndexer(base: string, query: JobListQuery): Promise<{jobs: IndexedJob[]; total: number}> {
  const params = new URLSearchParams({poster: query.poster, limit: String(query.limit), offset: String(query.offset)})
  if (query.state) params.set('state', query.state)
  if (query.market) params.set('market', query.market)
  if (query.node) params.set('node', query.node)
  const url = `${base}/jobs/?${params}`
  let response
  try {
    // GETs are retried by the one HTTP client, which waits as a 429's Retry-After says: the rate limit is honoured.
    response = await httpFetch(url, {headers: {accept: 'application/json'}})
  } catch (error) {
    throw unreachable(base, (error as Error).message)
  }
  if (response.status === 429) {
    throw new GpunetError('indexer_rate_limited', `the indexer at ${base} refuses more requests for now (429)`, {
      exitCode: ExitCode.UNAVAILABLE,
      hint: `it allows about 20 requests in 30 s: try again${response.headers.get('retry-after') ? ` in ${response.headers.get('retry-after')} s` : ' shortly'}, or list from the chain with --source chain`,
    })
  }
  if (!response.ok) throw unreachable(base, `it answered ${response.status}`)
  let body: unknown
  try {
    body = await response.json()
  } catch {
    throw unreachable(base, 'its answer is not JSON')
  }
  const document = body as {jobs?: unknown; totalJobs?: unknown}
  const list = Array.isArray(body) ? body : document?.jobs
  if (!Array.isArray(list)) throw unreachable(base, 'its answer has no jobs list')
  const jobs = list.map(normalized).filter((job): job is IndexedJob => job !== null)
  const total = typeof document.totalJobs === 'number' ? document.totalJobs : query.offset + jobs.length
  return {jobs, total}
}

const STATE_NUMBERS: Record<number, IndexedJobState> = {0: 'QUEUED', 1: 'RUNNING', 2: 'COMPLETED', 3: 'STOPPED'}

/** An indexer's job in the shape gpunet reads, whatever spelling of state and times it uses; null when unusable. */
function normalized(value: unknown): IndexedJob | null {
  if (typeof value !== 'object' || value === null) return null
  const job = value as Record<string, unknown>
  const state = typeof job.state === 'number' ? STATE_NUMBERS[job.state] : (job.state as IndexedJobState)
  if (typeof job.address !== 'string' || !JOB_LIST_STATES.includes(state as IndexedJobState)) return null
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null)
  // An indexer is a stranger: a time or price that is no whole number counts as none.
  const seconds = (v: unknown) => {
    const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : 0
    return Number.isFinite(n) ? n : 0
  }
  const price =
    typeof job.price === 'number' && Number.isSafeInteger(job.price) && job.price >= 0
      ? String(job.price)
      : typeof job.price === 'string' && /^\d{1,30}$/.test(job.price)
        ? job.price
        : '0'
  return {
    address: job.address,
    state: state as IndexedJobState,
    market: text(job.market) ?? '',
    node: text(job.node),
    project: text(job.project) ?? text(job.poster) ?? '',
    payer: text(job.payer) ?? '',
    price,
    timeout: seconds(job.timeout),
    timeStart: seconds(job.timeStart),
    timeEnd: seconds(job.timeEnd),
    ipfsJob: text(job.ipfsJob) ?? '',
    ipfsResult: text(job.ipfsResult),
    closed: job.closed === true,
    delisted: job.delisted === true,
  }
}

function unreachable(base: string, why: string): GpunetError {
  return new GpunetError('indexer_unavailable', `could not list jobs from the indexer at ${base}: ${why}`, {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'list from the chain with --source chain (jobs whose accounts were closed are not there), or set GPUNET_INDEXER_URL',
  })
}

/** The poster's jobs whose accounts exist, from `getProgramAccounts`, newest first by their times. */
async function fromChain(net: MarketNetwork, query: JobListQuery): Promise<{jobs: IndexedJob[]; total: number}> {
  const memcmp = (offset: number, bytes: Uint8Array) => ({memcmp: {offset, bytes: bs58.encode(bytes)}})
  const filters = [memcmp(0, JOB_ACCOUNT_DISCRIMINATOR), memcmp(OFFSET.project, new PublicKey(query.poster).toBytes())]
  if (query.market) filters.push(memcmp(OFFSET.market, new PublicKey(query.market).toBytes()))
  if (query.node) filters.push(memcmp(OFFSET.node, new PublicKey(query.node).toBytes()))
  const chainState = {
    QUEUED: JobState.QUEUED,
    RUNNING: JobState.QUEUED,
    COMPLETED: JobState.DONE,
    STOPPED: JobState.STOPPED,
  }
  if (query.state) filters.push(memcmp(OFFSET.state, Uint8Array.of(chainState[query.state])))
  const [accounts, runs] = await Promise.all([
    rpcCall(net.connection, () => net.connection.getProgramAccounts(net.programId, {filters})),
    rpcCall(net.connection, () =>
      net.connection.getProgramAccounts(net.programId, {filters: [memcmp(0, RUN_ACCOUNT_DISCRIMINATOR)]}),
    ),
  ])
  const runOf = new Map<string, {node: string; time: number}>()
  for (const {account} of runs) {
    try {
      const run = decodeRunAccount(account.data)
      runOf.set(run.job.toBase58(), {node: run.node.toBase58(), time: Number(run.time)})
    } catch {
      // not a run
    }
  }
  const jobs: IndexedJob[] = []
  for (const {pubkey, account} of accounts) {
    let job
    try {
      job = decodeJobAccount(account.data)
    } catch {
      continue
    }
    const address = pubkey.toBase58()
    const listed = indexedJob(address, job, (job.state === JobState.QUEUED && runOf.get(address)) || null)
    if (!query.state || listed.state === query.state) jobs.push(listed)
  }
  // The chain keeps no listing time: queued jobs first, then by start time, latest first.
  jobs.sort((a, b) => (b.timeStart || Infinity) - (a.timeStart || Infinity) || a.address.localeCompare(b.address))
  return {jobs: jobs.slice(query.offset, query.offset + query.limit), total: jobs.length}
}
