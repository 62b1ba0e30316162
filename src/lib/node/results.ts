/** Builds the flow state (flow-state.ts) a node uploads and records with `finish`, or `complete` after an `end`. */
import type {FlowState, JobFailure, OpState} from '../flow-state.js'
import type {OperationResult} from './runtime/runtime.js'

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
   * Records an operation; returns false when its exit code fails the job. `acceptStop`: a stop that is part of the
   * job's course (a service's lifetime over) is no failure; `jobStopped`/`jobExpired` say why it was stopped.
   */
  add(result: OperationResult, options: {acceptStop: boolean; jobStopped?: boolean; jobExpired?: boolean}): boolean {
    const {operationId: id, exitCode} = result
    const passed = exitCode === 0 || (result.stopped && options.acceptStop)
    const stoppedByEnd = result.stopped && Boolean(options.jobStopped)
    this.ops.push({
      providerId: result.runtime,
      operationId: id,
      group: id,
      // Stopped whatever the reason (the job ended or expired, its service's lifetime over): what it did is kept.
      status: result.stopped && (passed || stoppedByEnd) ? 'stopped' : passed ? 'success' : 'failed',
      startTime: Date.parse(result.startedAt),
      endTime: Date.parse(result.endedAt),
      exitCode,
      logs: result.logs,
      diagnostics: {
        reason: {hostShutDown: false, jobStopped: Boolean(options.jobStopped), jobExpired: Boolean(options.jobExpired)},
      },
      gpunet: {droppedLines: result.droppedLines, droppedBytes: result.droppedBytes},
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

  /** Marks the job as ended by its poster: its flow state says `stopped`, with the output up to then. */
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
