/**
 * Named crash points for the tests of paying safely: with GPUNET_DEPLOYMENT_CRASH_AT set to one of them, the
 * process kills itself there (SIGKILL: no cleanup, no flush, as a power cut or an OOM kill would), so a test can
 * restart the manager between "saved" and "sent", or between "sent" and "recorded".
 */
export const CRASH_ENV = 'GPUNET_DEPLOYMENT_CRASH_AT'

export const CRASH_POINTS = ['list-saved', 'list-sent', 'extend-saved', 'extend-sent'] as const
export type CrashPoint = (typeof CRASH_POINTS)[number]

/** Dies here when the environment names this point. */
export function crashPoint(point: CrashPoint, env: NodeJS.ProcessEnv): void {
  if (env[CRASH_ENV] !== point) return
  process.stderr.write(`${CRASH_ENV}=${point}: killing the manager's process here\n`)
  process.kill(process.pid, 'SIGKILL')
}
