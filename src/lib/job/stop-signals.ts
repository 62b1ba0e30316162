/** The signals that stop following a job (`--wait`, `job logs --follow`), which goes on without its follower. */
import {ExitCode} from '../errors.js'

/** The signals that stop following a job, each with its exit code (128 + the signal's number). */
const STOP_SIGNALS = {
  SIGINT: ExitCode.CANCELLED,
  SIGTERM: ExitCode.TERMINATED,
  SIGHUP: ExitCode.HANGUP,
} as const
export type StopSignal = keyof typeof STOP_SIGNALS

/** The exit code of following stopped by `signal`'s reason (a StopSignal; Ctrl+C when none is known). */
export function stopExitCode(signal: AbortSignal | undefined): (typeof STOP_SIGNALS)[StopSignal] {
  return STOP_SIGNALS[signal?.reason as StopSignal] ?? ExitCode.CANCELLED
}

/**
 * Runs `follow` with Ctrl+C (SIGINT), SIGTERM (a CI runner cancelling) and SIGHUP turned into an abort of its
 * signal, whose reason names the signal: the job is left running and the user is told how to follow it again.
 * The default behaviour of each signal comes back afterwards.
 */
export async function interruptible<T>(follow: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const handlers = Object.keys(STOP_SIGNALS).map((name) => {
    const abort = () => controller.abort(name)
    process.on(name, abort)
    return () => process.off(name, abort)
  })
  try {
    return await follow(controller.signal)
  } finally {
    for (const remove of handlers) remove()
  }
}
