/**
 * What stops following a job (`--wait`, `job logs --follow`), which goes on without its follower: a signal, or the
 * reader of the output going away.
 */
import {ExitCode, type ExitCodeValue} from '../errors.js'
import {onOutputClosed} from '../terminal/output-closed.js'

/** The signals that stop following a job, each with its exit code (128 + the signal's number). */
const STOP_SIGNALS = {
  SIGINT: ExitCode.CANCELLED,
  SIGTERM: ExitCode.TERMINATED,
  SIGHUP: ExitCode.HANGUP,
} as const
export type StopSignal = keyof typeof STOP_SIGNALS

/** The abort reason when stdout or stderr lost its reader: following stops quietly, exit 0, as `head` expects. */
export const OUTPUT_CLOSED = 'EPIPE'

/** The exit code of following stopped by `signal`'s reason (a StopSignal, or OUTPUT_CLOSED; Ctrl+C when none). */
export function stopExitCode(signal: AbortSignal | undefined): ExitCodeValue {
  if (signal?.reason === OUTPUT_CLOSED) return ExitCode.OK
  return STOP_SIGNALS[signal?.reason as StopSignal] ?? ExitCode.CANCELLED
}

/**
 * Runs `follow` with Ctrl+C (SIGINT), SIGTERM (a CI runner cancelling) and SIGHUP turned into an abort of its
 * signal, whose reason names the signal: the job is left running and the user is told how to follow it again.
 * The default behaviour of each signal comes back afterwards. A closed stdout or stderr aborts it too
 * (OUTPUT_CLOSED), on the first write that finds the reader gone.
 */
export async function interruptible<T>(follow: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const handlers: (() => unknown)[] = Object.keys(STOP_SIGNALS).map((name) => {
    const abort = () => controller.abort(name)
    process.on(name, abort)
    return () => process.off(name, abort)
  })
  handlers.push(onOutputClosed(() => controller.abort(OUTPUT_CLOSED)))
  try {
    return await follow(controller.signal)
  } finally {
    for (const remove of handlers) remove()
  }
}
