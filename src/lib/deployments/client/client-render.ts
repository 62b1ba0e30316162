/** How `gpunet deployment` shows the manager's objects to a person; `--json` prints the objects as the manager sent them. */
import {alignedColumns} from '../../market/jobs/report.js'
import {ENDPOINT_KINDS, type EndpointKind} from '../types.js'
import {TOKEN_DECIMALS} from '../../market/networks.js'
import type {ApiKey, AutoscaleStatusAnswer, Deployment, DeploymentEvent, DeploymentJob} from './client.js'

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
  // gpunet's manager's move under way and queue timeout; an address is shown only when it reads as one.
  const {move_from: from, queue_timeout: queueTimeout} = deployment
  if (typeof from === 'string' && /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(from)) lines.push(`  moving:     from ${from}`)
  if (typeof queueTimeout === 'number') lines.push(`  queue:      moves after ${queueTimeout} s QUEUED`)
  if (typeof deployment.time_scale === 'number' && deployment.time_scale !== 1) {
    lines.push(`  time scale: ${deployment.time_scale}`)
  }
  lines.push(...endpointLines(deployment.endpoints ?? []))
  lines.push(`  created:    ${deployment.created_at}`, `  updated:    ${deployment.updated_at}`)
  return lines
}

/** Token base units as tokens, for a person. */
function tokens(units: string): string {
  const padded = units.padStart(TOKEN_DECIMALS + 1, '0')
  const whole = padded.slice(0, -TOKEN_DECIMALS)
  const fraction = padded.slice(-TOKEN_DECIMALS).replace(/0+$/, '')
  return fraction ? `${whole}.${fraction}` : whole
}

/** A duration in seconds, for a person: 90 s, 12 min, 5.2 h, 3.1 days. */
function lasting(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`
  return `${(seconds / 86_400).toFixed(1)} days`
}

/** What `deployment get` adds from gpunet's autoscaling status: the policy, the traffic, the spend, the vault's reach. */
export function autoscaleLines(status: AutoscaleStatusAnswer): string[] {
  const {policy, signal, spend, vault} = status
  const lines = [
    policy
      ? `  autoscale:  ${policy.min_replicas} to ${policy.max_replicas} replicas, ${policy.target_concurrency} in flight per replica, down after ${policy.scale_down_after} s`
      : '  autoscale:  off (a fixed replica count)',
  ]
  if (policy)
    lines.push(
      signal
        ? `  traffic:    ${signal.in_flight} in flight, ${signal.held} held (at ${signal.at}), ${status.replicas} replicas`
        : `  traffic:    not reported (no gateway in front of this manager), ${status.replicas} replicas`,
    )
  const budget = spend.budget_base_units === null ? 'no budget' : `of a budget of ${tokens(spend.budget_base_units)}`
  lines.push(
    `  spend:      ${tokens(spend.token_base_units)} tokens ${budget}, and ${spend.fee_lamports} lamports of SOL fees (reported, not capped)`,
    `  burn rate:  ${tokens(status.burn_rate_per_hour)} tokens an hour at ${status.replicas} replicas`,
  )
  const sharers = vault.deployments === 1 ? '1 running deployment' : `${vault.deployments} running deployments`
  lines.push(
    vault.lasts_seconds === null
      ? `  vault:      ${tokens(vault.token_base_units)} tokens; nothing pays from it now`
      : `  vault:      ${tokens(vault.token_base_units)} tokens last ${lasting(vault.lasts_seconds)} at ${tokens(vault.burn_rate_per_hour)} an hour (${sharers})`,
  )
  return lines
}

/**
 * Each endpoint on a line of its own, with its kind (docs/deployment-manager.md): the network's deployment URL, gpunet's
 * stable URL, a replica's own. The network's manager sends its deployment URLs without a kind, and gpunet's managers
 * before kinds marked stable ones `stable: true` and replicas with their `job`: each is read as what it was.
 */
function endpointLines(endpoints: NonNullable<Deployment['endpoints']>): string[] {
  if (endpoints.length === 0) return []
  const state = (e: Record<string, unknown>) => (e.online === true ? ', online' : e.online === false ? ', offline' : '')
  const width = Math.max(...ENDPOINT_KINDS.map((kind) => kind.length))
  return [
    '  endpoints:',
    ...endpoints.map((e) => {
      const job = typeof e.job === 'string' ? `, job ${e.job}` : ''
      return `    ${kindOf(e).padEnd(width)}  ${e.url} (${e.opId}:${e.port}${job}${state(e)})`
    }),
  ]
}

/** An endpoint's kind as the manager marked it, or as a manager that marks none meant it. */
function kindOf(endpoint: Record<string, unknown>): EndpointKind {
  const kind = ENDPOINT_KINDS.find((k) => k === endpoint.kind)
  if (kind) return kind
  if (endpoint.stable === true) return 'stable'
  return typeof endpoint.job === 'string' ? 'replica' : 'deployment'
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
