/**
 * What a runtime gives back when an operation ends: the record a node builds the job's result from
 * (result-builder.ts), kept here with the result so that the runtime and the result each import it, not each other.
 */
import type {LogEntry} from './flow-state.js'

/** Which runtime ran an operation. */
export type RuntimeKind = 'podman' | 'host-process'

/**
 * What happened when an operation ran (exit code 125 to 127 are podman's own failures), under `operationId`, plus
 * how it ran. Holds no secret value: outputs are masked, env is never echoed.
 */
export interface OperationResult {
  operationId: string
  runtime: RuntimeKind
  /** The command's exit code; 128 + N when a signal N ended it. */
  exitCode: number
  startedAt: string
  endedAt: string
  /** Its output as lines, in order across both streams, with what the caps dropped. */
  logs: LogEntry[]
  droppedLines: number
  droppedBytes: number
  /** Each stream's kept lines joined, for reading one stream at a time. */
  stdout: string
  stderr: string
  /** Ended by a stop (the job ended or timed out, a dependency ended, or its poster stopped it). */
  stopped: boolean
  /** False when it ran on the host without a container. */
  isolated: boolean
  /** Things the poster should know about how it ran (no GPU, no container, ...). */
  notices: string[]
  /** The runtime's one-line reason when it, not the operation's command, failed (an image it could not pull). */
  runtimeFailure?: string
}
