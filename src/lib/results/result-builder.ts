/** Builds the flow state (flow-state.ts) a node uploads and records with `finish`, or `complete` after an `end`. */
import type {ResultRule} from '../definition/network-form/node-members.js'
import {
  type FlowState,
  type JobFailure,
  type LogEntry,
  MAX_LOG_BYTES,
  MAX_LOG_LINES,
  type OpState,
} from './flow-state.js'
import type {OperationResult} from './operation-result.js'

/** How an operation ended and ran, for its state: why it stopped, its group, its restarts and its `results` rules. */
export interface OperationCourse {
  /** A stop that is part of the job's course (a dependency ended, its poster stopped the operation): no failure. */
  acceptStop: boolean
  jobStopped?: boolean
  jobExpired?: boolean
  group?: string
  restarts?: {exitCode: number; endTime: number}[]
  results?: Record<string, ResultRule>
}

/** Collects operation results into a job's flow state. */
export class ResultBuilder {
  private readonly ops: OpState[] = []
  private readonly notices = new Set<string>()
  private readonly startTime = Date.now()
  private isolated = true
  private failure: JobFailure | undefined
  private stopped = false

  constructor(
    private readonly job: string,
    private readonly node: string,
  ) {}

  /**
   * Records an operation; returns false when its exit code fails the job (or the job's end stopped it).
   * `acceptStop`: a stop that is part of the job's course is no failure; `jobStopped`/`jobExpired` say why it was
   * stopped.
   */
  add(result: OperationResult, options: OperationCourse): boolean {
    const {operationId: id, exitCode} = result
    const passed = exitCode === 0 || (result.stopped && options.acceptStop)
    // The job's end (its poster's, or its timeout: the node says why) stopped it: that is no failure of its own.
    const stoppedByEnd = result.stopped && Boolean(options.jobStopped || options.jobExpired)
    // As the network's nodes record an operation their expiry stopped (getStatus maps `expired` to `success`).
    const expired = result.stopped && Boolean(options.jobExpired) && !options.jobStopped
    this.ops.push({
      providerId: result.runtime,
      operationId: id,
      group: options.group ?? id,
      // Stopped whatever the reason (the job ended, a dependency ended): what it did is kept.
      status: expired
        ? 'success'
        : result.stopped && (passed || stoppedByEnd)
          ? 'stopped'
          : passed
            ? 'success'
            : 'failed',
      startTime: Date.parse(result.startedAt),
      endTime: Date.parse(result.endedAt),
      exitCode,
      logs: result.logs,
      diagnostics: {
        reason: {
          hostShutDown: false,
          jobStopped: Boolean(options.jobStopped),
          jobExpired: Boolean(options.jobExpired),
          // The network's words for a stop of the whole flow (runTaskManagerOperation).
          ...(stoppedByEnd ? {reason: `Operation stopped due to flow ${expired ? 'expired' : 'stopped'}`} : {}),
        },
      },
      ...(options.results ? {results: extractResults(result.logs, options.results)} : {}),
      gpunet: {
        droppedLines: result.droppedLines,
        droppedBytes: result.droppedBytes,
        ...(options.restarts?.length ? {restarts: options.restarts} : {}),
      },
    })
    for (const notice of result.notices) this.notices.add(notice)
    if (!result.isolated) this.isolated = false
    if (passed || stoppedByEnd) return !stoppedByEnd
    const message = result.runtimeFailure
      ? `Operation ${id} could not run: ${result.runtimeFailure} (${result.runtime} exited with code ${exitCode}).`
      : `Operation ${id} exited with code ${exitCode}.`
    this.fail({code: 'operation_failed', message, op: id, exitCode})
    return false
  }

  /** The status the last operation added was given: `success`, `failed` or `stopped`. */
  get lastOpStatus(): OpState['status'] | undefined {
    return this.ops.at(-1)?.status
  }

  /** Notes something the poster should know about how the job ran. */
  notice(text: string): void {
    this.notices.add(text)
  }

  /** Fails the job (the first failure is kept). */
  fail(failure: JobFailure): void {
    this.failure ??= failure
  }

  /**
   * Marks the job as ended by its poster: its flow state says `stopped`, with the output up to then. (A job that
   * reached its timeout is not stopped: as on the network, its flow state says `success`.)
   */
  stop(): void {
    this.stopped = true
  }

  /** The finished flow state. */
  build(): FlowState {
    const status = this.stopped ? 'stopped' : this.failure ? 'failed' : 'success'
    return {
      status,
      startTime: this.startTime,
      endTime: Date.now(),
      ...(this.failure && !this.stopped ? {errors: [this.failure]} : {}),
      opStates: this.ops,
      gpunet: {
        version: 2,
        job: this.job,
        node: this.node,
        isolated: this.isolated,
        notices: [...this.notices],
        ...(this.failure && !this.stopped ? {failure: this.failure} : {}),
      },
    }
  }
}

/**
 * The runs of one operation (its first and each restart) as one result, as the network's nodes keep one state per
 * operation: every run's lines in order (the oldest dropped beyond the caps), the last run's exit code and end.
 */
export function mergeRuns(runs: readonly OperationResult[]): OperationResult {
  const last = runs.at(-1)!
  if (runs.length === 1) return last
  let logs: LogEntry[] = runs.flatMap((r) => r.logs)
  let droppedLines = runs.reduce((n, r) => n + r.droppedLines, 0)
  let droppedBytes = runs.reduce((n, r) => n + r.droppedBytes, 0)
  let bytes = logs.reduce((n, e) => n + Buffer.byteLength(e.log), 0)
  let cut = 0
  while (cut < logs.length && (logs.length - cut > MAX_LOG_LINES || bytes > MAX_LOG_BYTES)) {
    bytes -= Buffer.byteLength(logs[cut]!.log)
    droppedBytes += Buffer.byteLength(logs[cut]!.log)
    droppedLines++
    cut++
  }
  logs = logs.slice(cut)
  const joined = (type: LogEntry['type']) =>
    logs
      .filter((e) => e.type === type)
      .map((e) => e.log)
      .join('')
  return {
    ...last,
    startedAt: runs[0]!.startedAt,
    logs,
    droppedLines,
    droppedBytes,
    stdout: joined('stdout'),
    stderr: joined('stderr'),
    notices: [...new Set(runs.flatMap((r) => r.notices))],
  }
}

/**
 * What each `results` rule matches in the logs, as the network's nodes extract it: every line of the named streams
 * (all when none is named) matched against the rule's regex, adding the match and its groups; the regex `*` is
 * `/*`. A regex that does not compile gives its error, as text.
 */
export function extractResults(
  logs: readonly LogEntry[],
  rules: Record<string, ResultRule>,
): Record<string, string | string[]> {
  const found: Record<string, string | string[]> = {}
  for (const [name, rule] of Object.entries(rules)) {
    let regex: RegExp
    try {
      regex = new RegExp(rule.regex === '*' ? '/*' : rule.regex)
    } catch (error) {
      found[name] = String(error)
      continue
    }
    const matches: string[] = []
    for (const entry of logs) {
      if (rule.logType && !rule.logType.includes(entry.type)) continue
      const match = entry.log.match(regex)
      // Groups that took part in no match are undefined; a flow state holds strings.
      if (match) matches.push(...match.map((m) => m ?? ''))
    }
    found[name] = matches
  }
  return found
}
