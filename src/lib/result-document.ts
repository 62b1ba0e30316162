/**
 * The job result document: what a node uploads to the content store and records on chain with `finish`, and
 * what `gpunet job get` reads back. Shared by the node and the client, so it belongs to neither.
 */

/** One operation's outcome: its id, exit code, times, capped outputs (secrets masked) and whether it was stopped. */
export interface OperationRecord {
  id: string
  /** The command's exit code; 128 + N when a signal N ended it. */
  exitCode: number
  startedAt: string
  endedAt: string
  stdout: string
  stderr: string
  /** Bytes cut from the middle of stdout and stderr. */
  stdoutCutBytes: number
  stderrCutBytes: number
  stopped: boolean
}

/** Why a job failed: the operation and exit code, or an error before any operation ended (never a secret value). */
export interface JobFailure {
  code: string
  message: string
  op?: string
  exitCode?: number
}

/** What `gpunet job get` shows as a job's result. */
export interface JobResult {
  job: string
  node: string
  status: 'success' | 'failed'
  /** False when any operation ran as a host process, without a container. */
  isolated: boolean
  notices: string[]
  ops: OperationRecord[]
  error?: JobFailure
}
