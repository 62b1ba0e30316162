/**
 * Whether a running replica serves, the one reading both the job watch (INFINITE's readiness; the tunnel watch of a
 * manager with no proxy stream) and the rollout (a new revision's replica) use: every port its revision exposes online, as its node's continuous
 * health checks say on the localnet (the node API's endpoint status, asked as the job's poster, the vault), or as
 * the manager's own probe of the job's service URLs finds elsewhere.
 */
import type {HealthCheck} from '../../definition/schema.js'
import {endpointStatus} from '../../market/jobs/endpoint-status.js'
import type {JobView} from '../../market/jobs/jobs.js'
import {type ExposingDefinition, exposedPorts, serviceUrls} from '../../market/service-url.js'
import {probeServices} from '../../node/readiness.js'
import type {ManagerContext} from '../context.js'
import {readRecordedJob} from '../paying/chain-view.js'
import {vaultWallet} from '../paying/paying.js'
import type {DeploymentRow, JobRow} from '../types.js'

/** A revision's definition when it exposes a port (one to watch); null when it exposes none or is unknown. */
export async function exposingDefinition(
  ctx: ManagerContext,
  deployment: string,
  revision: number,
): Promise<ExposingDefinition | null> {
  const row = await ctx.store.revision(deployment, revision)
  if (!row) return null
  const parsed = JSON.parse(row.job_definition) as ExposingDefinition
  return Array.isArray(parsed.ops) && exposedPorts(parsed).length > 0 ? parsed : null
}

/**
 * The definition as the network's frpc checks its ports: each port's health checks cut to its HTTP GET ones
 * expecting 200 (the only ones frpc runs), so a port with none is read as a tunnel is, without a check. The
 * definition itself when every check is one of those.
 */
export function tunnelDefinition(definition: ExposingDefinition): ExposingDefinition {
  let cut = false
  const keep = (entry: unknown): unknown => {
    if (typeof entry !== 'object' || entry === null || !('health_checks' in entry)) return entry
    const checks = (entry as {health_checks?: unknown}).health_checks
    if (!Array.isArray(checks)) return entry
    const kept = checks.filter((c: HealthCheck) => c.type === 'http' && c.method === 'GET' && c.expected_status === 200)
    if (kept.length === checks.length) return entry
    cut = true
    return {...entry, health_checks: kept}
  }
  const ops = definition.ops.map((op) => {
    const expose = op.args.expose
    return {...op, args: {...op.args, expose: Array.isArray(expose) ? expose.map(keep) : keep(expose)}}
  })
  return cut ? {...definition, ops} : definition
}

/** True when every port the definition exposes answers for the running job `view`. */
export async function replicaServes(
  ctx: ManagerContext,
  deployment: Pick<DeploymentRow, 'vault'>,
  view: JobView,
  definition: ExposingDefinition,
): Promise<boolean> {
  const ports = exposedPorts(definition)
  if (ports.length === 0) return true
  if (ctx.network === 'localnet') {
    const online = await endpointStatus(ctx.net, await vaultWallet(ctx, deployment.vault), view)
    return online !== null && ports.every((port) => online.get(port) === true)
  }
  const urls = serviceUrls(ctx.network, view.address.toBase58(), definition, {networkHost: ctx.net.networkHost})
  if (urls.length === 0) return false
  return (await probeServices(urls, definition, false)).ready
}

/**
 * True when a replica is ready to take traffic, the readiness a rollout and a move wait for: RUNNING, and each port
 * its revision exposes online (replicaServes); with no port exposed, running is ready.
 */
export async function replicaReady(
  ctx: ManagerContext,
  deployment: Pick<DeploymentRow, 'vault'>,
  row: JobRow,
  definition: ExposingDefinition | null,
): Promise<boolean> {
  if (row.state !== 'RUNNING') return false
  if (!definition) return true
  const view = await readRecordedJob(ctx, row)
  return view !== null && (await replicaServes(ctx, deployment, view, definition))
}
