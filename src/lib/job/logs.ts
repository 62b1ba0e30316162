/**
 * A job's logs: a running job's lines from its node's API (`/flog`, falling back to `/log`), reconnecting and
 * dropping what a reconnect replays, until the job ends on chain; an ended job's lines from its result. Container
 * lines go to `line`; what the node says of the job, and gpunet's own notices, go to `notice`.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import type {PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'
import type {MarketNetwork} from '../market/connect.js'
import {jobInfo, type JobInfo} from '../market/jobs/job-info.js'
import {isFinal, type JobView, readJob} from '../market/jobs/jobs.js'
import {
  type FlogEntry,
  type NodeApiAction,
  type NodeLogEntry,
  signHeader,
  type SocketPath,
} from '../node-api/protocol.js'
import {subscribe, type Subscription} from '../node-api/client.js'
import type {Wallet} from '../keys/wallet.js'
import {stopExitCode} from './stop-signals.js'

/** One line of a job's output, as `job logs --json` prints it; `stream` is null where the node does not say. */
export interface LogLine {
  op: string | null
  stream: 'stdout' | 'stderr' | null
  time: string
  line: string
}

export interface JobLogsOptions {
  /** Until the job ends (a QUEUED job is waited for); without it, what there is now. */
  follow: boolean
  /** Only this operation's lines. */
  op?: string
  /** Only lines from this time on (unix ms). */
  sinceMs?: number
  /** The poster's wallet, which signs the node API's header; loaded only for a running job. */
  wallet?: () => Promise<Wallet>
  /**
   * Instead of a wallet: the poster's address and a maker of its headers elsewhere (a deployment's vault signs at its
   * manager); loaded only for a running job.
   */
  poster?: () => Promise<NodeApiPoster>
  /**
   * Takes one line; a promise returned says the reader is full: the node's socket is paused until it settles, so
   * a reader that does not read holds the node back instead of filling memory.
   */
  line: (line: LogLine) => void | Promise<void>
  notice: (text: string) => void
  /** Aborted on Ctrl+C. */
  signal?: AbortSignal
  /** How often the chain is read while following (default 1 s). */
  pollMs?: number
  /** Whether an ended job's lines are read from its result (default true; `--wait` shows live lines only). */
  resultLines?: boolean
}

/** A job's poster as the node API sees it: its address, and the header it signs for a route of one job. */
export interface NodeApiPoster {
  address: string
  header(scope: {action: NodeApiAction; node: string; job: string}): Promise<string>
}

/** The poster whose wallet is at hand: headers signed here. */
function walletPoster(wallet: Wallet): NodeApiPoster {
  return {address: wallet.address, header: async (scope) => signHeader((m) => wallet.sign(m), scope)}
}

/** How reading the logs ended: the job as last read, and its report with the result once it ended. */
export interface JobLogsEnd {
  view: JobView
  report: JobInfo | null
  lines: number
}

/** Reconnects wait this long at first, doubling up to RECONNECT_MAX_MS. */
const RECONNECT_MIN_MS = 200
const RECONNECT_MAX_MS = 5000
/** Once the job ended on chain, the stream is read until it is quiet this long (lines may still be in flight). */
const DRAIN_QUIET_MS = 300
const DRAIN_MAX_MS = 3000
/** Without --follow: the history is read until the stream is quiet this long (there is no end-of-history frame). */
const HISTORY_QUIET_MS = 500
const HISTORY_MAX_MS = 5000

/**
 * Drops what a reconnect replays. Localnet entries are numbered (`seq`); the network's `/flog` timestamps are
 * strictly increasing per job, and for entries without either guarantee the lines at the last time seen are
 * counted: best effort, documented.
 */
export class ReplayFilter {
  private lastSeq = 0
  private lastTime = Number.NEGATIVE_INFINITY
  private keptAtLast = 0
  private seenAtLast = 0

  /** A new connection replays its history from the start. */
  reconnected(): void {
    this.seenAtLast = 0
  }

  /** True when the entry was handed on before. */
  replayed(entry: {seq?: unknown; timestamp: number}): boolean {
    if (Number.isSafeInteger(entry.seq)) {
      const seq = entry.seq as number
      if (seq <= this.lastSeq) return true
      this.lastSeq = seq
      return false
    }
    if (entry.timestamp < this.lastTime) return true
    if (entry.timestamp === this.lastTime) {
      if (++this.seenAtLast <= this.keptAtLast) return true
      this.keptAtLast++
      return false
    }
    this.lastTime = entry.timestamp
    this.keptAtLast = this.seenAtLast = 1
    return false
  }
}

/** Reads a job's logs as `gpunet job logs` does (see JobLogsOptions). */
export async function jobLogs(net: MarketNetwork, job: PublicKey, options: JobLogsOptions): Promise<JobLogsEnd> {
  const address = job.toBase58()
  let view = await readJob(net.connection, net.programId, job)
  if (view.status === 'QUEUED') {
    if (!options.follow) {
      throw new GpunetError('job_queued', `job ${address} is QUEUED: no node has taken it, so it has no logs yet`, {
        exitCode: ExitCode.NOT_FOUND,
        hint: `wait for its lines with \`gpunet job logs ${address} --follow\``,
        fields: {job: address, state: 'QUEUED', status: 'QUEUED'},
      })
    }
    options.notice(`Job ${address} is QUEUED; waiting for a node to take it`)
    view = await pollUntil(net, job, (v) => v.status !== 'QUEUED', options)
  }
  let lines = 0
  const seenOps = new Set<string>()
  // `/log` names no operation, and streams every operation's lines: once it gave any, the result adds none.
  let sawUnnamedLines = false
  const counted = (line: LogLine) => {
    lines++
    if (line.op) seenOps.add(line.op)
    else sawUnnamedLines = true
    return options.line(line)
  }
  if (view.status === 'RUNNING') {
    await streamFromNode(net, view, {...options, line: counted})
    view = await readJob(net.connection, net.programId, job)
    if (!isFinal(view.status)) return {view, report: null, lines}
  }
  if (options.resultLines === false) return {view, report: null, lines}
  const report = await jobInfo(net, view, null)
  const result = report.resultView
  if (!result) {
    options.notice(
      report.result
        ? `The result of job ${address} is in a format gpunet does not read: \`gpunet job get ${address}\` shows it`
        : `Job ${address} is ${view.status} and has no result recorded, so no logs`,
    )
    return {view, report, lines}
  }
  // Operations the stream showed nothing of (it connected late, or not at all) come from the result.
  for (const op of result.ops) {
    if (sawUnnamedLines || seenOps.has(op.id) || (options.op !== undefined && op.id !== options.op)) continue
    for (const entry of op.logs) {
      const time = entry.time ?? report.endedAt ?? new Date(0).toISOString()
      if (options.sinceMs !== undefined && Date.parse(time) < options.sinceMs) continue
      await counted({op: op.id, stream: entry.stream, time, line: entry.line.replace(/\r?\n$/, '')})
    }
  }
  return {view, report, lines}
}

/**
 * Reads the chain every pollMs until `done` holds. `retryFailedReads`: a read that fails is tried again at the next
 * tick (a watch in the background), instead of failing the wait.
 */
async function pollUntil(
  net: MarketNetwork,
  job: PublicKey,
  done: (view: JobView) => boolean,
  options: Pick<JobLogsOptions, 'signal' | 'pollMs'> & {retryFailedReads?: boolean},
): Promise<JobView> {
  for (;;) {
    const view = await readJob(net.connection, net.programId, job).catch((error: unknown) => {
      if (options.retryFailedReads) return null
      throw error
    })
    if (view && done(view)) return view
    await pause(options.pollMs ?? 1000, options.signal)
  }
}

/** Waits `ms`, or throws `interrupted` once the signal aborts. */
async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, {signal})
  } catch {
    throw interrupted(signal)
  }
}

function interrupted(signal?: AbortSignal): GpunetError {
  return new GpunetError('logs_interrupted', 'Stopped reading the logs; the job goes on.', {
    exitCode: stopExitCode(signal),
  })
}

/** Streams a running job's lines from its node's API until the job ends (follow) or the history is read. */
async function streamFromNode(net: MarketNetwork, view: JobView, options: JobLogsOptions): Promise<void> {
  const job = view.address.toBase58()
  const node = view.run!.node.toBase58()
  const base = net.nodeApiUrl(node)
  if (!base) {
    options.notice(
      `No node API URL for ${net.name}: set the network host (--network-host or GPUNET_NETWORK_HOST) or GPUNET_NODE_API_URL; ` +
        (options.follow ? 'the lines come from the result once the job ends' : 'no live lines'),
    )
    if (options.follow) await pollUntil(net, view.address, (v) => isFinal(v.status), options)
    return
  }
  if (!options.poster && !options.wallet) throw new Error('jobLogs needs the poster: a wallet or a NodeApiPoster')
  const poster = options.poster ? await options.poster() : walletPoster(await options.wallet!())
  if (poster.address !== view.job.project.toBase58()) {
    throw new GpunetError('not_poster', `only the poster of job ${job} may read its live logs from its node`, {
      exitCode: ExitCode.DENIED,
      hint: `its poster is ${view.job.project.toBase58()} (choose that wallet with --wallet); an ended job's logs are public in its result`,
    })
  }
  const replay = new ReplayFilter()
  const started = Date.now()
  let lastFrameAt = 0
  let endedAt: number | null = null
  let path: SocketPath = '/flog'
  let current: Subscription | null = null
  let stopping = false
  let refusal: string | null = null
  let warnedOp = false

  let skipped = 0
  const badFrame = (why: string) => {
    // The first says why; a node sending nothing but bad frames is summed up once at the end.
    if (++skipped === 1) options.notice(`Skipped a frame from the node: ${why}`)
  }
  // While the reader is full the socket is paused, and the stream counts as busy, not quiet.
  let paused = false
  const hold = (wait: void | Promise<void>) => {
    // A sink typed to return nothing may still return a write's boolean: only a promise says it is full.
    if (!(wait instanceof Promise) || paused) return
    paused = true
    current?.pause()
    const resume = () => {
      paused = false
      lastFrameAt = Date.now()
      current?.resume()
    }
    void wait.then(resume, resume)
  }
  const onFrame = (frame: string, data: unknown) => {
    lastFrameAt = Date.now()
    if (frame !== 'flog' && frame !== 'log') return
    const entry = data as Partial<FlogEntry & NodeLogEntry> | null
    if (typeof entry !== 'object' || entry === null) return badFrame(`its ${frame} entry is not an object`)
    if (!isTime(entry.timestamp)) {
      return badFrame(`its timestamp ${JSON.stringify(entry.timestamp ?? null).slice(0, 40)} is not a time`)
    }
    if (frame === 'flog') flogEntry(entry as FlogEntry)
    else logEntry(entry as NodeLogEntry)
  }
  const wanted = (timestamp: number) => options.sinceMs === undefined || timestamp >= options.sinceMs
  const flogEntry = (entry: FlogEntry) => {
    if (replay.replayed(entry) || !wanted(entry.timestamp)) return
    const text = typeof entry.message === 'string' ? entry.message : JSON.stringify(entry.message ?? null)
    if (entry.type !== 'container') return options.notice(`[node] ${text}`)
    const op = typeof entry.opId === 'string' ? entry.opId : null
    if (options.op !== undefined && op !== options.op) return
    const stream = entry.stream === 'stdout' || entry.stream === 'stderr' ? entry.stream : null
    hold(options.line({op, stream, time: new Date(entry.timestamp).toISOString(), line: text}))
  }
  const logEntry = (entry: NodeLogEntry) => {
    if (replay.replayed(entry) || !wanted(entry.timestamp)) return
    // A `/log` line ends with its newline, as the network's nodes send it (a node that leaves it out is read alike).
    // Progress entries may carry an object (a pull's layers): shown as JSON, never as "[object Object]".
    const raw = entry.log ?? ''
    const text = (typeof raw === 'string' ? raw : JSON.stringify(raw)).replace(/\r?\n$/, '')
    if (entry.type !== 'log') {
      if (PROGRESS_TYPES.has(entry.type)) options.notice(`[node] ${text}`)
      return
    }
    if (options.op !== undefined && !warnedOp) {
      warnedOp = true
      options.notice("The node's /log stream does not say which operation a line is from: --op cannot apply to it")
    }
    hold(options.line({op: null, stream: null, time: new Date(entry.timestamp).toISOString(), line: text}))
  }

  // Decides when to stop: the job ended on chain and the stream went quiet, or (without --follow) the history
  // is read. Checked often, so the last line is not held back.
  const watch = setInterval(() => {
    if (paused && !options.signal?.aborted) return
    const now = Date.now()
    const done = options.follow
      ? endedAt !== null && (now - Math.max(lastFrameAt, endedAt) >= DRAIN_QUIET_MS || now - endedAt >= DRAIN_MAX_MS)
      : (lastFrameAt > 0 && now - lastFrameAt >= HISTORY_QUIET_MS) || now - started >= HISTORY_MAX_MS
    if (options.signal?.aborted) {
      // The user or the pipe's reader left: `| head -1` returns now, not after the node answers the close.
      stopping = true
      current?.terminate()
    } else if (done) {
      stopping = true
      current?.close()
    }
  }, 50)
  // While following, the chain is watched in the background for the job's end.
  const stopWatching = new AbortController()
  if (options.follow) {
    const final = {pollMs: options.pollMs, signal: stopWatching.signal, retryFailedReads: true}
    pollUntil(net, view.address, (v) => isFinal(v.status), final).then(
      () => (endedAt ??= Date.now()),
      () => undefined,
    )
  }
  try {
    for (let attempt = 0; !stopping;) {
      replay.reconnected()
      const header = await poster.header({action: 'read', node, job})
      if (options.signal?.aborted) break
      const body = {
        jobAddress: job,
        address: poster.address,
        ...(path === '/flog' && options.op ? {opId: options.op} : {}),
      }
      current = subscribe(base, {path, header, body}, onFrame, badFrame)
      if (paused) current.pause()
      const end = await current.ended
      current = null
      if (stopping) break
      if (end.code === 3000) {
        refusal = end.reason || 'unauthorized'
        break
      }
      if (path === '/flog' && (end.code === 3003 || end.code === 1008)) {
        options.notice(`The node has no /flog stream for this job (${end.code} ${end.reason}); reading /log instead`)
        path = '/log'
        continue
      }
      if (end.frames > 0) attempt = 0
      attempt++
      const why = end.error ?? `${end.code} ${end.reason}`.trim()
      if (!options.follow && attempt > 3) {
        options.notice(`Could not read the node's API at ${base}: ${why}`)
        break
      }
      const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** (attempt - 1))
      options.notice(`Lost the node API (${why}); reconnecting in ${delay} ms`)
      await sleep(delay, undefined, {signal: options.signal}).catch(() => undefined)
      if (options.signal?.aborted) break
    }
  } finally {
    clearInterval(watch)
    stopWatching.abort()
  }
  if (skipped > 1) options.notice(`Skipped ${skipped} frames from the node in all`)
  if (options.signal?.aborted) throw interrupted(options.signal)
  if (refusal !== null) {
    throw new GpunetError('node_api_refused', `the node API refused to stream job ${job}: ${refusal}`, {
      exitCode: ExitCode.DENIED,
      hint: "the node checks the job poster's signature: use the wallet that posted the job (--wallet)",
    })
  }
}

/** Whether a frame's timestamp is a time in unix ms that a Date can hold (±8.64e15), as ISO text needs. */
function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= 8.64e15
}

/** Types of the node's `/log` entries worth showing besides container lines. */
const PROGRESS_TYPES = new Set(['info', 'success', 'error', 'process', 'stop'])
