/** Builds the result document (result-document.ts) a node uploads and records on chain with `finish`. */
import type {JobFailure, JobResult, OperationRecord} from '../result-document.js'
import type {OperationResult} from './runtime/runtime.js'

/** Collects operation results into a job result. */
export class ResultBuilder {
  private readonly ops: OperationRecord[] = []
  private readonly notices = new Set<string>()
  private isolated = true
  private failure: JobFailure | undefined

  constructor(
    private readonly job: string,
    private readonly node: string,
  ) {}

  /** Records an operation; returns false when its exit code fails the job. */
  add(result: OperationResult, options: {acceptStop: boolean}): boolean {
    const {operationId: id, exitCode, startedAt, endedAt, stdout, stderr, stdoutCutBytes, stderrCutBytes} = result
    this.ops.push({
      id,
      exitCode,
      startedAt,
      endedAt,
      stdout,
      stderr,
      stdoutCutBytes,
      stderrCutBytes,
      stopped: result.stopped,
    })
    for (const notice of result.notices) this.notices.add(notice)
    if (!result.isolated) this.isolated = false
    if (exitCode === 0 || (result.stopped && options.acceptStop)) return true
    this.fail({code: 'operation_failed', message: `Operation ${id} exited with code ${exitCode}.`, op: id, exitCode})
    return false
  }

  /** Notes something the poster should know about how the job ran. */
  notice(text: string): void {
    this.notices.add(text)
  }

  /** Fails the job (the first failure is kept). */
  fail(failure: JobFailure): void {
    this.failure ??= failure
  }

  /** The finished document. */
  build(): JobResult {
    return {
      job: this.job,
      node: this.node,
      status: this.failure ? 'failed' : 'success',
      isolated: this.isolated,
      notices: [...this.notices],
      ops: this.ops,
      ...(this.failure ? {error: this.failure} : {}),
    }
  }
}
