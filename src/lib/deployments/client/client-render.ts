/** How `gpunet deployment` shows the manager's objects to a person; `--json` prints the objects as the manager sent them. */
import {alignedColumns} from '../../market/jobs/report.js'
import type {ApiKey, Deployment, DeploymentEvent, DeploymentJob} from './client.js'

/** A deployment as `deployment get` and `create` print it: one `key: value` line each. */
export function deploymentLines(deployment: Deployment): string[] {
  const lines = [
    `Deployment ${deployment.id} (${deployment.name})`,
    `  status:     ${deployment.status}`,
    `  strategy:   ${deployment.strategy}`,
    `  replicas:   ${deployment.replicas}${deployment.active_jobs === undefined ? '' : ` (${deployment.active_jobs} active)`}`,
    `  timeout:    ${deployment.timeout} min`,
    `  market:     ${deployment.market}`,
    `  vault:      ${deployment.vault}`,
    `  owner:      ${deployment.owner}`,
  ]
  // What the manager sent is untrusted: a schedule is shown only when it is printable text of a cron's length.
  const {schedule, rotation_time: rotation, startup_timeout: startup} = deployment
  if (typeof schedule === 'string' && schedule.length <= 200 && /^[\x20-\x7e]*$/.test(schedule))
    lines.push(`  schedule:   ${schedule} (UTC)`)
  if (typeof rotation === 'number') lines.push(`  rotation:   ${rotation} s before each job's end`)
  if (typeof startup === 'number') lines.push(`  startup:    ${startup} min to come online`)
  if (typeof deployment.time_scale === 'number' && deployment.time_scale !== 1) {
    lines.push(`  time scale: ${deployment.time_scale}`)
  }
  lines.push(...endpointLines(deployment.endpoints ?? []))
  lines.push(`  created:    ${deployment.created_at}`, `  updated:    ${deployment.updated_at}`)
  return lines
}

/**
 * The stable URL of each port (where the manager's gateway gives one), then each replica's; where none is stable,
 * a line saying the network gives none, so nobody takes a replica's URL for one that lasts.
 */
function endpointLines(endpoints: NonNullable<Deployment['endpoints']>): string[] {
  const state = (e: Record<string, unknown>) => (e.online === true ? ', online' : e.online === false ? ', offline' : '')
  const lines = endpoints
    .filter((e) => e.stable === true)
    .map((e) => `  stable URL: ${e.url} (${e.opId}:${e.port}${state(e)})`)
  const replicas = endpoints.filter((e) => e.stable !== true)
  if (replicas.length > 0 && lines.length === 0)
    lines.push('  endpoints:  the network gives no stable URL per deployment; each replica has its own:')
  for (const e of replicas)
    lines.push(
      `  replica:    ${e.url} (${e.opId}:${e.port}${typeof e.job === 'string' ? `, job ${e.job}` : ''}${state(e)})`,
    )
  return lines
}

/** `deployment list` as aligned columns. */
export function deploymentRows(deployments: Deployment[]): string[] {
  if (deployments.length === 0) return []
  return alignedColumns([
    ['ID', 'NAME', 'STATUS', 'STRATEGY', 'REPLICAS', 'TIMEOUT', 'CREATED'],
    ...deployments.map((d) => [
      d.id,
      d.name,
      d.status,
      d.strategy,
      d.active_jobs === undefined ? String(d.replicas) : `${d.active_jobs}/${d.replicas}`,
      `${d.timeout} min`,
      d.created_at,
    ]),
  ])
}

/** `deployment jobs` as aligned columns. */
export function jobRows(jobs: DeploymentJob[]): string[] {
  if (jobs.length === 0) return []
  return alignedColumns([
    ['JOB', 'STATE', 'REVISION', 'NODE', 'STARTED'],
    ...jobs.map((job) => [
      job.job,
      String(job.state),
      job.revision === undefined ? '-' : String(job.revision),
      job.node ?? '-',
      job.time_start ? new Date(job.time_start * 1000).toISOString() : '-',
    ]),
  ])
}

/** One event as `deployment events` prints it: time, type, message, and its transaction when there is one. */
export function eventLine(event: DeploymentEvent): string {
  return `${event.created_at}  ${event.type}  ${event.message}${event.tx ? ` (tx ${event.tx})` : ''}`
}

/** `deployment api-key list` as aligned columns. */
export function apiKeyRows(keys: ApiKey[]): string[] {
  if (keys.length === 0) return []
  return alignedColumns([
    ['ID', 'NAME', 'CREATED'],
    ...keys.map((key) => [String(key.id), key.name ?? '-', String(key.created_at)]),
  ])
}
