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
  TIMEOUT: 124,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

export interface GpunetErrorOptions {
  hint?: string
  exitCode?: ExitCodeValue
  cause?: unknown
}

/** The one error type of gpunet: a stable machine `code`, a human message, an optional hint and an exit code. */
export class GpunetError extends Error {
  readonly code: string
  readonly hint?: string
  readonly exitCode: ExitCodeValue

  constructor(code: string, message: string, options: GpunetErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'GpunetError'
    this.code = code
    this.hint = options.hint
    this.exitCode = options.exitCode ?? ExitCode.FAILURE
  }

  /** The `{"error": {...}}` document printed under `--json`. */
  toJSON(): {error: {code: string; message: string; hint?: string}} {
    return {error: {code: this.code, message: this.message, ...(this.hint ? {hint: this.hint} : {})}}
  }
}

/** True for a GpunetError, also across module copies (duck-typed on the name). */
export function isGpunetError(value: unknown): value is GpunetError {
  return value instanceof GpunetError || (value instanceof Error && value.name === 'GpunetError' && 'exitCode' in value)
}
