/**
 * A deployment's `endpoints`, each marked with its `kind`:
 * - `deployment`: the network's own URL of the deployment, one per exposed operation, load-balanced by the nodes over
 *   every replica carrying its `deployment_id` (listed-definition.ts), listed once per port of the operation as the
 *   network's manager lists it (`deploymentCreate.factory.ts`);
 * - `stable`: gpunet's stable URL of each port, where a gateway in front of the manager serves one (the localnet's),
 *   which adds draining, resending and ejection to what the network's URL does;
 * - `replica`: each running replica's own URL of each port.
 * The network's URLs come first, so `endpoints[0]` means what it means at the network's manager.
 */
import {
  deploymentPortUrls,
  exposedServices,
  type ExposingDefinition,
  type ServiceHosts,
  serviceUrls,
} from '../../market/service-url.js'
import type {Network} from '../../network.js'
import type {ManagerContext} from '../context.js'
import {isDraining} from '../draining.js'
import type {DeploymentRow, EndpointKind, JobRow} from '../types.js'

/**
 * One endpoint, as the network's object has it (`opId`, `port`, `url`), plus gpunet's `kind`, `online` (absent where
 * the manager cannot see it) and, for a replica, `job`.
 */
export interface DeploymentEndpoint {
  opId: string
  port: number
  url: string
  kind: EndpointKind
  online?: boolean
  job?: string
}

/** One exposed port's URL, with the operation exposing it. */
export interface OperationUrl {
  opId: string
  port: number
  url: string
}

/** The network's deployment URL of each exposed port (deploymentPortUrls), as the network's manager lists them. */
export function networkDeploymentUrls(
  network: Network,
  deployment: string,
  vault: string,
  definition: ExposingDefinition,
  hosts: ServiceHosts,
): OperationUrl[] {
  return deploymentPortUrls(network, deployment, vault, definition, hosts).map(({op, port, url}) => ({
    opId: op,
    port,
    url,
  }))
}

/** The endpoints of a deployment whose jobs are `jobs`: the network's URLs, gpunet's stable ones, each replica's. */
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
  // The ports whose checks pass on some running replica, by operation: the network's domain sends them requests
  // (a draining replica too: draining is gpunet's stable URL's, the network's nodes know nothing of it).
  const up = new Set<string>()
  for (const job of jobs.filter((row) => row.state === 'RUNNING')) {
    const definition = await definitionOf(job.revision)
    if (!definition) continue
    for (const {op, port, url} of serviceUrls(ctx.network, job.job, definition, hosts)) {
      const checked = gateway?.online(job, port)
      if (checked) up.add(`${op}:${port}`)
      const online = gateway ? {online: checked === true && !isDraining(ctx, job)} : {}
      replicas.push({opId: op, port, url, kind: 'replica', ...online, job: job.job})
    }
  }
  const active = await definitionOf(deployment.active_revision)
  if (!active) return replicas
  const network = networkDeploymentUrls(ctx.network, deployment.id, deployment.vault, active, hosts).map(
    (e): DeploymentEndpoint => ({
      ...e,
      kind: 'deployment',
      ...(gateway ? {online: up.has(`${e.opId}:${e.port}`)} : {}),
    }),
  )
  if (!gateway) return [...network, ...replicas]
  const seen = new Set<number>()
  const ports = exposedServices(active).filter(({port}) => !seen.has(port) && seen.add(port))
  const stable = ports.map(({op, port}, i): DeploymentEndpoint => {
    const url = gateway.deploymentUrl(deployment.id, i === 0 ? undefined : port)
    const online = replicas.some((r) => r.port === port && r.online === true)
    return {opId: op, port, url, kind: 'stable', online}
  })
  return [...network, ...stable, ...replicas]
}

function readDefinition(text: string): ExposingDefinition | null {
  try {
    const value = JSON.parse(text) as {ops?: unknown}
    return Array.isArray(value.ops) ? (value as ExposingDefinition) : null
  } catch {
    return null
  }
}
