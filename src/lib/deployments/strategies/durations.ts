/** The durations a strategy works with, each divided by the deployment's time_scale (1 off the localnet). */
import type {DeploymentRow} from '../types.js'

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
