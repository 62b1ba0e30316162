/** Exit codes shared by every command (see ARCHITECTURE.md, "Conventions"). */
export const ExitCode = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  INVALID_INPUT: 3,
  INSUFFICIENT_BALANCE: 4,
  UNAVAILABLE: 5,
  DENIED: 6,
  NOT_FOUND: 7,
  /** The job ended with a failed outcome (a `--wait`, `job logs`): docs/json.md, "States and outcomes". */
  JOB_FAILED: 8,
  /** The job was stopped before it finished (its poster ended it, its node gave it up, or it was delisted). */
  JOB_STOPPED: 9,
  TIMEOUT: 124,
  /** A hangup (SIGHUP: the terminal closed) during `--wait` or `job logs --follow`: 128 + 1. */
  HANGUP: 129,
  /** The user cancelled: Ctrl+C or Ctrl+D at a prompt, "no" to a confirmation, Ctrl+C during `--wait`. */
  CANCELLED: 130,
  /** SIGTERM during `--wait` or `job logs --follow` (how CI runners cancel a step): 128 + 15. */
  TERMINATED: 143,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

/** A value JSON can hold. */
export type JsonValue = string | number | boolean | null | JsonValue[] | {[key: string]: JsonValue}

/** Structured members of an error document besides code, message and hint (e.g. `job`, `status`, `errors`). */
export type ErrorFields = Record<string, JsonValue>

export interface GpunetErrorOptions {
  hint?: string
  exitCode?: ExitCodeValue
  cause?: unknown
  /** Machine-readable facts of the error, printed as members of `{"error": {...}}` under `--json`. */
  fields?: ErrorFields
}

/** The one error type of gpunet: a stable machine `code`, a human message, an optional hint and an exit code. */
export class GpunetError extends Error {
  readonly code: string
  readonly hint?: string
  readonly exitCode: ExitCodeValue
  readonly fields: ErrorFields

  constructor(code: string, message: string, options: GpunetErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'GpunetError'
    this.code = code
    this.hint = options.hint
    this.exitCode = options.exitCode ?? ExitCode.FAILURE
    this.fields = options.fields ?? {}
  }

  /** The `{"error": {...}}` document printed under `--json`: code, message, hint, then the structured fields. */
  toJSON(): {error: {code: string; message: string; hint?: string} & ErrorFields} {
    return {error: {code: this.code, message: this.message, ...(this.hint ? {hint: this.hint} : {}), ...this.fields}}
  }
}

/** True for a GpunetError, also across module copies (duck-typed on the name). */
export function isGpunetError(value: unknown): value is GpunetError {
  return value instanceof GpunetError || (value instanceof Error && value.name === 'GpunetError' && 'exitCode' in value)
}
