/**
 * The result a node pins and records with `finish` (or `complete` after its poster ended the job): the network's
 * "flow state" (reference/network-job-plane.md §2, the types of @nosana/types), written by the localnet's node and
 * read by the client through result-view.ts. What gpunet adds lives in `gpunet` members, which the network's
 * clients and its schema leave alone (docs/jobs.md).
 */

/** Log entries a node keeps per operation, as the network's nodes do (the oldest are dropped). */
export const MAX_LOG_LINES = 24_999
/** Bytes of log text kept per operation (the oldest lines dropped), so a result stays under upload limits. */
export const MAX_LOG_BYTES = 8 * 1024 * 1024
/** Longest line kept whole; a longer run of output without a newline is split into lines of this size. */
export const MAX_LINE_BYTES = 64 * 1024

/** One line of output, as the network's nodes log it: its stream, the text with its newline, and when. */
export interface LogEntry {
  type: 'stdout' | 'stderr'
  log: string
  timestamp: string
}

/** Why a job failed (never a secret value): the operation and its exit code, or an error before any ended. */
export interface JobFailure {
  code: string
  message: string
  op?: string
  exitCode?: number
}

/** One operation's state. */
export interface OpState {
  providerId: string
  operationId: string
  group: string
  status: 'init' | 'running' | 'success' | 'failed' | 'stopped'
  startTime: number | null
  endTime: number | null
  exitCode: number | null
  logs: LogEntry[]
  diagnostics: {reason: {hostShutDown: boolean; jobStopped: boolean; jobExpired: boolean; reason?: string}}
  /** What its `results` rules matched in its logs, by name (the network's member). */
  results?: Record<string, string | string[]>
  /**
   * gpunet's own: what the caps dropped (stated, never silent), and each earlier run its `restart_policy` started
   * again (its exit code and end), in order; its logs hold every run's lines.
   */
  gpunet: {droppedLines: number; droppedBytes: number; restarts?: {exitCode: number; endTime: number}[]}
}

/** The flow state of a job. */
export interface FlowState {
  status: 'success' | 'failed' | 'stopped'
  startTime: number
  endTime: number | null
  errors?: JobFailure[]
  opStates: OpState[]
  /** gpunet's own: the job and node, whether every operation ran in a container, notices and the failure. */
  gpunet: {
    version: 2
    job: string
    node: string
    isolated: boolean
    notices: string[]
    failure?: JobFailure
  }
}
