/**
 * Named crash points for the tests of paying safely: with GPUNET_DEPLOYMENT_CRASH_AT set to one of them, the
 * process kills itself there (SIGKILL: no cleanup, no flush, as a power cut or an OOM kill would), so a test can
 * restart the manager between "saved" and "sent", or between "sent" and "recorded". A job's failover (job/failover/)
 * has its own points, between each journal entry and the transaction it announces; and a pause point, where the
 * process stops itself (SIGSTOP) until the test has changed the world and sends SIGCONT.
 */
export const CRASH_ENV = 'GPUNET_DEPLOYMENT_CRASH_AT'

/** Names the point where a process stops itself (SIGSTOP), for a test to arrange a race deterministically. */
export const PAUSE_ENV = 'GPUNET_PAUSE_AT'

export const CRASH_POINTS = ['list-saved', 'list-sent', 'extend-saved', 'extend-sent'] as const
/** A failover's journal points: the delist and the new listing, each saved and then sent. */
export const FAILOVER_CRASH_POINTS = ['delist-saved', 'delist-sent', 'relist-saved', 'relist-sent'] as const
export type CrashPoint = (typeof CRASH_POINTS)[number] | (typeof FAILOVER_CRASH_POINTS)[number]

/** The points a process may pause at: a failover between its decision to move (its delist saved) and the delist sent. */
export type PausePoint = 'before-delist'

/** Dies here when the environment names this point. */
export function crashPoint(point: CrashPoint, env: NodeJS.ProcessEnv): void {
  if (env[CRASH_ENV] !== point) return
  process.stderr.write(`${CRASH_ENV}=${point}: killing this process here\n`)
  process.kill(process.pid, 'SIGKILL')
}

/** Stops the process here (SIGSTOP) when the environment names this point; it goes on once sent SIGCONT. */
export function pausePoint(point: PausePoint, env: NodeJS.ProcessEnv): void {
  if (env[PAUSE_ENV] !== point) return
  process.stderr.write(`${PAUSE_ENV}=${point}: pausing this process here (SIGCONT resumes it)\n`)
  process.kill(process.pid, 'SIGSTOP')
}
