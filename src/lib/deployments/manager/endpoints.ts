/**
 * A deployment's `endpoints`: each exposed port of each running replica at its job's own URL, and, where a gateway
 * in front of the manager serves them (the localnet's), one stable URL per port that outlives the replicas. The
 * network's nodes give each job its own URLs and no stable one; a client says so when none is stable.
 */
import {exposedServices, serviceUrls, type ExposingDefinition} from '../../market/service-url.js'
import type {ManagerContext} from '../context.js'
import {isDraining} from '../draining.js'
import type {DeploymentRow, JobRow} from '../types.js'

/**
 * One endpoint, as the network's object has it (`opId`, `port`, `url`, `online`), plus gpunet's `stable` (the
 * deployment's stable URL) or `job` (the replica it belongs to). `online` is absent where the manager cannot see it.
 */
export interface DeploymentEndpoint {
  opId: string
  port: number
  url: string
  online?: boolean
  stable?: true
  job?: string
}

/** The endpoints of a deployment whose jobs are `jobs`: stable ones first, then each running replica's. */
export async function deploymentEndpoints(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  jobs: readonly JobRow[],
): Promise<DeploymentEndpoint[]> {
  const definitions = new Map<number, ExposingDefinition | null>()
  const definitionOf = async (revision: number) => {
    if (!definitions.has(revision)) {
      const row = await ctx.store.revision(deployment.id, revision)
      definitions.set(revision, row ? readDefinition(row.job_definition) : null)
    }
    return definitions.get(revision) ?? null
  }
  const {gateway} = ctx
  const hosts = {networkHost: ctx.net.networkHost, gatewayUrl: ctx.net.gatewayUrl}
  const replicas: DeploymentEndpoint[] = []
  for (const job of jobs.filter((row) => row.state === 'RUNNING')) {
    const definition = await definitionOf(job.revision)
    if (!definition) continue
    for (const {op, port, url} of serviceUrls(ctx.network, job.job, definition, hosts)) {
      const online = gateway ? {online: gateway.online(job.job, port) && !isDraining(ctx, job.job)} : {}
      replicas.push({opId: op, port, url, ...online, job: job.job})
    }
  }
  const active = await definitionOf(deployment.active_revision)
  if (!gateway || !active) return replicas
  const seen = new Set<number>()
  const ports = exposedServices(active).filter(({port}) => !seen.has(port) && seen.add(port))
  const stable = ports.map(({op, port}, i): DeploymentEndpoint => {
    const url = gateway.deploymentUrl(deployment.id, i === 0 ? undefined : port)
    const online = replicas.some((r) => r.port === port && r.online === true)
    return {opId: op, port, url, online, stable: true}
  })
  return [...stable, ...replicas]
}

function readDefinition(text: string): ExposingDefinition | null {
  try {
    const value = JSON.parse(text) as {ops?: unknown}
    return Array.isArray(value.ops) ? (value as ExposingDefinition) : null
  } catch {
    return null
  }
}
