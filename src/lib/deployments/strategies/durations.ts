/** The durations a strategy works with, each divided by the deployment's time_scale (1 off the localnet). */
import type {DeploymentRow} from '../types.js'

/** The network's manager polls every 5 s (divided by the largest time_scale it runs: worker.ts). */
export const POLL_MS = 5000

/** The shortest and longest extend lead of SIMPLE-EXTEND, in seconds, before scaling (the network's manager's). */
export const EXTEND_LEAD_MIN_S = 60
export const EXTEND_LEAD_MAX_S = 300

/** The timeout each job is listed with and extended by, in seconds: the deployment's minutes, scaled. */
export function jobTimeoutSeconds(deployment: Pick<DeploymentRow, 'timeout' | 'time_scale'>): number {
  return Math.max(1, Math.round((deployment.timeout * 60) / deployment.time_scale))
}

/** How long before a job's end SIMPLE-EXTEND extends it: clamp(10% of the timeout, 60 s, 300 s), scaled, in ms. */
export function extendLeadMs(deployment: Pick<DeploymentRow, 'timeout' | 'time_scale'>): number {
  const lead = Math.min(EXTEND_LEAD_MAX_S, Math.max(EXTEND_LEAD_MIN_S, deployment.timeout * 60 * 0.1))
  return Math.round((lead * 1000) / deployment.time_scale)
}

/** INFINITE's numbers, before scaling, as the network's manager has them. */
export const INFINITE = {
  /** The rotation lead when the deployment names none: 20 minutes. */
  defaultRotationS: 20 * 60,
  /** A job that ran less than this counts as a rapid completion. */
  rapidMs: 5 * 60_000,
  /**
   * The latest COMPLETED jobs looked at, per replica, and the fewest that must be there, all rapid, for the
   * throttle (the network's rapid_completion_job_count); its waits are the rapid-completion cooldown (cooldowns.ts).
   */
  rapidJobsPerReplica: 3,
} as const

/** A duration of the strategy divided by the deployment's time_scale, in ms. */
export function scaledMs(deployment: Pick<DeploymentRow, 'time_scale'>, ms: number): number {
  return Math.round(ms / deployment.time_scale)
}

/** How long before a job's end INFINITE lists its replacement, scaled, in ms. */
export function rotationLeadMs(deployment: Pick<DeploymentRow, 'rotation_time' | 'time_scale'>): number {
  return scaledMs(deployment, (deployment.rotation_time ?? INFINITE.defaultRotationS) * 1000)
}

/** How long a started job has to come online, scaled, in ms; null when the deployment sets no startup_timeout. */
export function startupTimeoutMs(deployment: Pick<DeploymentRow, 'startup_timeout' | 'time_scale'>): number | null {
  const minutes = deployment.startup_timeout
  return minutes ? scaledMs(deployment, minutes * 60_000) : null
}
