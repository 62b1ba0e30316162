/**
 * `--wait`: following a job until the point the user asked for (`--wait-for running|ready|done`), within one
 * deadline, with a progress line; Ctrl+C stops following (the job goes on) and a job that ended failed is exit 8, stopped exit 9.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import type {PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError, type JsonValue} from '../errors.js'
import type {MarketNetwork} from '../market/connect.js'
import {isFinal, type JobStatus, type JobView, readJob} from '../market/jobs/jobs.js'
import {outcomeText, type JobOutcome} from '../results/outcome.js'
import {type ExposingDefinition, exposedPorts, serviceUrls} from '../market/service-url.js'
import type {Network} from '../network.js'
import {startProgress} from '../terminal/progress.js'
import {printable} from '../text/terminal-text.js'
import type {Wallet} from '../keys/wallet.js'
import {jobLogs} from './logs.js'
import {interruptible, stopExitCode} from './stop-signals.js'
import {probeServices} from '../node/readiness.js'
import type {WaitPoint} from './wait-point.js'

/** The order a job's statuses come in; a job never goes back. */
const STATUS_ORDER: Record<JobStatus, number> = {QUEUED: 0, RUNNING: 1, COMPLETED: 2, STOPPED: 2}

/** Polling interval of the chain and of the service probes. */
const POLL_MS = 500

/** The default point: `ready` for a job that exposes ports (a service is what its poster waits for), else `done`. */
export function defaultWaitPoint(definition: ExposingDefinition | null): WaitPoint {
  return definition && exposedPorts(definition).length > 0 ? 'ready' : 'done'
}

export interface FollowOptions {
  until: WaitPoint
  timeoutSeconds: number
  /** The job's definition, for its service URLs and health checks; null when it could not be read. */
  definition: ExposingDefinition | null
  /** One line for each new thing seen: a status, then what the service answers. */
  progress: (line: string) => void
  /** Aborted on Ctrl+C, SIGTERM or SIGHUP (the reason names it): following stops with 128 + its number. */
  signal?: AbortSignal
}

/**
 * Follows a job until `until` holds or it ends (whatever `until`). `ready` is RUNNING plus every service URL
 * answering its health checks; a job without exposed ports is ready once it runs. Exit 124 at the deadline.
 */
export async function followJob(net: MarketNetwork, job: PublicKey, options: FollowOptions): Promise<JobView> {
  const deadline = Date.now() + options.timeoutSeconds * 1000
  const address = job.toBase58()
  let shown = ''
  let status: JobStatus | null = null
  const show = (line: string) => {
    if (line !== shown) options.progress((shown = line))
  }
  for (;;) {
    const view = await unlessAborted(readJob(net.connection, net.programId, job), options.signal)
    if (!view) throw interrupted(net.name, address, status, options.signal)
    // An RPC node behind the one read before may show an earlier status: progress never goes backwards, so such
    // a read is passed over (the deadline still holds).
    const behind = status !== null && STATUS_ORDER[view.status] < STATUS_ORDER[status]
    if (behind && Date.now() < deadline) {
      await sleep(POLL_MS, undefined, {signal: options.signal}).catch(() => undefined)
      continue
    }
    status = view.status
    // One line per poll, so that without a terminal (where a changed line is printed again) a job waiting for
    // its service does not print "is RUNNING" and "waiting for its service" turn by turn.
    const awaitingService = view.status === 'RUNNING' && options.until === 'ready'
    if (!awaitingService) show(`Job ${address} is ${view.status}`)
    if (isFinal(view.status) || (view.status === 'RUNNING' && options.until === 'running')) return view
    let notReady: string | undefined
    if (awaitingService) {
      const readiness = await unlessAborted(serviceReadiness(net, address, options.definition), options.signal)
      if (!readiness) throw interrupted(net.name, address, status, options.signal)
      if (readiness.ready) {
        show(`Job ${address} is RUNNING`)
        return view
      }
      notReady = readiness.detail
      show(`Job ${address} is RUNNING; waiting for its service: ${notReady}`)
    }
    if (Date.now() >= deadline) throw waitTimeout(net.name, address, view.status, options.timeoutSeconds, notReady)
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())), undefined, {signal: options.signal}).catch(
      () => undefined,
    )
  }
}

/** What `work` resolves to, or undefined as soon as `signal` aborts: Ctrl+C need not wait for a slow probe. */
function unlessAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T | undefined> {
  if (!signal) return work
  if (signal.aborted) return Promise.resolve(undefined)
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined)
    // Removed once the work settles: one listener per poll would pile up on the signal.
    signal.addEventListener('abort', onAbort, {once: true})
    work.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject)
  })
}

async function serviceReadiness(
  net: MarketNetwork,
  address: string,
  definition: ExposingDefinition | null,
): Promise<{ready: boolean; detail: string}> {
  if (!definition || exposedPorts(definition).length === 0) return {ready: true, detail: 'no exposed port'}
  const urls = serviceUrls(net.name, address, definition, {networkHost: net.networkHost, gatewayUrl: net.gatewayUrl})
  // Without a URL there is nothing to probe: running is as far as a poster can tell.
  if (urls.length === 0) return {ready: true, detail: 'no service URL to probe'}
  return probeServices(urls, definition, net.name === 'localnet')
}

/** `--network NAME` for commands the user is told to run, when the network is not the default one. */
function networkFlag(network: Network): string {
  return network === 'localnet' ? '' : ` --network ${network}`
}

/** The command that follows the job again. */
function followCommand(network: Network, job: string): string {
  return `gpunet job get ${job} --wait${networkFlag(network)}`
}

function waitTimeout(
  network: Network,
  job: string,
  status: JobStatus,
  timeout: number,
  notReady: string | undefined,
): GpunetError {
  const what = notReady
    ? `job ${job} is RUNNING but its service is not ready after ${timeout} s (${notReady})`
    : `job ${job} is still ${status} after ${timeout} s`
  return new GpunetError('wait_timeout', what, {
    exitCode: ExitCode.TIMEOUT,
    hint: `follow it with \`${followCommand(network, job)}\`, or raise --wait-timeout`,
    fields: {job, state: status, status, timeout},
  })
}

function interrupted(network: Network, job: string, status: JobStatus | null, signal?: AbortSignal): GpunetError {
  const by = typeof signal?.reason === 'string' && signal.reason !== 'SIGINT' ? ` (${signal.reason})` : ''
  return new GpunetError(
    'wait_interrupted',
    `Stopped following job ${job}${by}; the job goes on${status ? ` (${status})` : ''}.`,
    {
      exitCode: stopExitCode(signal),
      hint: `follow it again with \`${followCommand(network, job)}\`, or end it with \`gpunet job stop ${job}${networkFlag(network)}\``,
      fields: {job, state: status, status, signal: typeof signal?.reason === 'string' ? signal.reason : 'SIGINT'},
    },
  )
}

/** Whether `error` ended a `--wait` with the job still going (a signal, or the deadline): its report is wanted. */
export function stoppedWaiting(error: unknown): error is GpunetError {
  return error instanceof GpunetError && (error.code === 'wait_interrupted' || error.code === 'wait_timeout')
}

/** How long a job that ended may take to hand over its last live lines before `--wait` returns. */
const LOGS_DRAIN_MS = 3000

/**
 * `--wait` as the commands run it: progress on stderr (a spinner on a terminal), Ctrl+C handled. With `logs`, the
 * job's live lines go to stderr as `[op] line` while it is followed (its poster's wallet signs for them); lines
 * that cannot be had (another wallet, no node API) are noted once and the wait goes on without them.
 */
export async function waitForJob(
  net: MarketNetwork,
  job: PublicKey,
  options: Omit<FollowOptions, 'progress' | 'signal'> & {logs?: {wallet: () => Promise<Wallet>}},
): Promise<JobView> {
  const progress = startProgress(`Following job ${job.toBase58()} (Ctrl+C stops following; the job goes on)`)
  const stopLogs = new AbortController()
  const logs = options.logs
    ? jobLogs(net, job, {
        follow: true,
        resultLines: false,
        pollMs: 250,
        wallet: options.logs.wallet,
        signal: stopLogs.signal,
        line: (entry) => progress.print(printable(`[${entry.op ?? 'job'}] ${entry.line}`, process.stderr)),
        notice: (text) => {
          if (text.startsWith('[node]') || text.startsWith('Skipped')) progress.print(printable(text, process.stderr))
        },
      }).catch((error: Error) => {
        if (!stopLogs.signal.aborted) progress.print(printable(`(no live lines: ${error.message})`, process.stderr))
      })
    : null
  try {
    const view = await interruptible((signal) =>
      followJob(net, job, {...options, progress: (line) => progress.update(line), signal}),
    )
    // An ended job's last lines may still be on their way; a job still running (ready) is left to run.
    if (logs && isFinal(view.status)) await Promise.race([logs, sleep(LOGS_DRAIN_MS)])
    return view
  } finally {
    stopLogs.abort()
    await logs
    progress.stop()
  }
}

/** What `--wait` asks for: where to stop (default: defaultWaitPoint), the deadline, and the job's live lines. */
export interface WaitRequest {
  until?: WaitPoint
  timeoutSeconds: number
  /** Print the job's live lines while following, when a wallet is there to sign for them. */
  logs: boolean
}

/** A `--wait` done, stopped or not asked for: the job as last seen, and what the command ends with. */
export interface Followed {
  /** The job as the wait left it (or as `seen`, when nothing was followed); null when it stopped early. */
  view: JobView | null
  /** The error to end with once the report is printed: the wait stopped, or saw the job end badly. */
  failure(report: Parameters<typeof jobEndedBadly>[1]): GpunetError | null
}

/**
 * `--wait` when asked (`wait` is null otherwise), as waitForJob follows; a job `seen` ended already is not followed.
 * `wallet` is the poster's, which signs for the live lines. Stopping early (a signal, the deadline) is not thrown:
 * the job goes on, and its report says where it is.
 */
export async function followIfAsked(
  net: MarketNetwork,
  job: PublicKey,
  wait: WaitRequest | null,
  {definition, wallet, seen}: {definition: ExposingDefinition | null; wallet?: () => Promise<Wallet>; seen?: JobView},
): Promise<Followed> {
  const ending =
    (stopped: GpunetError | null): Followed['failure'] =>
    (report) =>
      stopped ?? (wait ? jobEndedBadly(net.name, report) : null)
  if (!wait || (seen && isFinal(seen.status))) return {view: seen ?? null, failure: ending(null)}
  try {
    const view = await waitForJob(net, job, {
      until: wait.until ?? defaultWaitPoint(definition),
      timeoutSeconds: wait.timeoutSeconds,
      definition,
      logs: wait.logs && wallet ? {wallet} : undefined,
    })
    return {view, failure: ending(null)}
  } catch (error) {
    if (!stoppedWaiting(error)) throw error
    return {view: null, failure: ending(error)}
  }
}

/**
 * The error of a job that `--wait` (or `job logs`) saw end badly, by its outcome (docs/json.md): failed is exit 8;
 * stopped is exit 9, whether its poster ended it (the program settles `end` as COMPLETED, without a result until its
 * node records one), its node gave it up (`quit`: STOPPED) or its result says so.
 */
export function jobEndedBadly(
  network: Network,
  report: {job: string; state: string; result: string | null} & JobOutcome,
): GpunetError | null {
  // `status` is deprecated (0.2): `state`, kept for one minor version.
  const fields = {job: report.job, state: report.state, status: report.state, outcome: report.outcome}
  if (report.outcome === 'failed') {
    return new GpunetError('job_failed', `job ${report.job} ${outcomeText(report)}`, {
      exitCode: ExitCode.JOB_FAILED,
      hint: `the report holds the result of each operation; read it again with \`gpunet job get ${report.job}${networkFlag(network)}\``,
      fields: {...fields, failure: (report.failure ? {...report.failure} : null) as JsonValue},
    })
  }
  if (report.outcome !== 'stopped') return null
  const stopped = (message: string, hint: string) =>
    new GpunetError('job_stopped', `job ${report.job} ${message}`, {exitCode: ExitCode.JOB_STOPPED, hint, fields})
  if (report.state === 'STOPPED') {
    return stopped(
      'was stopped by its node before it finished',
      'the node gave the job up (quit); post it again to have another node run it',
    )
  }
  if (report.result === null) {
    return stopped(
      'was ended before it finished: it has no result',
      'its poster ended it (gpunet job stop); the node was paid for the time it ran',
    )
  }
  return stopped(
    'was stopped before it finished',
    `its result holds the output up to the stop; read it with \`gpunet job get ${report.job}${networkFlag(network)}\``,
  )
}
