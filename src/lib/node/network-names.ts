/**
 * The names the network's nodes serve a job's ports under (nosana-cli `src/generic/expose-util.ts` and
 * `Provider.ts`): each port at its expose-id hash, and, when the definition has a `deployment_id`, each exposed
 * operation at its deployment's domain, its ports in the load-balancer groups `<deploymentHash>-<port>`. The node
 * works them out; the gateway (which this file's type lets it be told) answers them.
 */
import type {HealthCheck} from '../definition/schema.js'
import {deploymentHash, deploymentLabel, serviceId} from '../market/service-url.js'

/** Where a job's exposed port is served under the network's names. */
export interface NetworkName {
  /** The container port. */
  port: number
  /** Its expose-id hash (`getExposeIdHash(job, opIndex, port)`), 44 base58 characters. */
  label: string
  /** Its operation's deployment domain and its load-balancer group; none without `deployment_id`. */
  deployment?: {
    /** The operation's deployment domain (`getExposeIdHash(deploymentHash, op.id, 0)`). */
    domain: string
    /** The group `<deploymentHash>-<port>`. */
    group: string
    /** The operation's id and the definition's `deployment_id`: the metadata frpc gives the proxy. */
    opId: string
    id?: string
    /** The path of the port's first HTTP check with method GET expecting 200: the group checks its member there. */
    healthPath?: string
  }
}

/** What the network's names of one operation are worked out from. */
export interface NamedOperation {
  job: string
  /** The operation's index in the definition as posted (what the network's node counts). */
  opIndex: number
  opId: string
  /** Its deployment hash (`deploymentHash(deployment_id, poster)`); none without `deployment_id`. */
  deploymentHash?: string
  /** The definition's `deployment_id` (what frpc's metadata names the deployment by). */
  deploymentId?: string
  ports: readonly {port: number; health_checks?: readonly HealthCheck[]}[]
}

/** The network's names of an operation's ports, as the network's node registers them with its FRP server. */
export function networkNames({
  job,
  opIndex,
  opId,
  deploymentHash: hash,
  deploymentId,
  ports,
}: NamedOperation): NetworkName[] {
  return ports.map(({port, health_checks: checks = []}) => {
    const name: NetworkName = {port, label: serviceId(job, opIndex, port)}
    if (hash === undefined) return name
    // As generateProxies does: only an HTTP GET check expecting 200 says where the group checks its member.
    const check = checks.find((c) => c.type === 'http' && c.method === 'GET' && c.expected_status === 200)
    const healthPath = check?.type === 'http' ? check.path : undefined
    name.deployment = {
      domain: deploymentLabel(hash, opId),
      group: `${hash}-${port}`,
      opId,
      ...(deploymentId === undefined ? {} : {id: deploymentId}),
      ...(healthPath === undefined ? {} : {healthPath}),
    }
    return name
  })
}

/** The deployment hash of a job (none without `deployment_id`): its poster is the job's project on the chain. */
export function jobDeploymentHash(deploymentId: string | undefined, project: string): string | undefined {
  return deploymentId === undefined ? undefined : deploymentHash(deploymentId, project)
}
