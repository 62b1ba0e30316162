/**
 * The localnet's answer to the gateway's question "which replicas serve this deployment's port": the deployment
 * manager's rows say which jobs belong to the deployment and which are draining, the nodes running them say whether
 * the port is ONLINE (its health checks, the continuous ones included).
 */
import {isDraining} from '../../deployments/draining.js'
import {deploymentIdsByLabel, holdsAtZeroByLabel, openJobRows} from '../../deployments/stable-routes.js'
import type {RunningManager} from '../../deployments/manager.js'
import {portLabel} from '../../market/service-url.js'
import type {DeploymentRoutes, ReplicaRoute} from '../../gateway/stable-url.js'
import type {RunningNode} from './node-agent.js'

/** True when the job's `port` (null: the one at its own URL) is ONLINE on the node running it. */
export function replicaOnline(nodes: RunningNode, job: string, port: number | null): boolean {
  const served = port ?? nodes.gateway.primaryPort(job)
  if (served === null) return false
  for (const agent of nodes.agents) {
    const endpoints = agent.endpoints(job)
    if (endpoints) return endpoints[portLabel(job, served)]?.status === 'ONLINE'
  }
  return false
}

/** The localnet's DeploymentRoutes, from its manager and its nodes. */
export function localnetDeploymentRoutes(manager: RunningManager, nodes: RunningNode): DeploymentRoutes {
  const {store} = manager.context
  // Host names come lowercased, deployment ids are base58 (mixed case).
  const idOf = deploymentIdsByLabel(store)
  const openJobs = openJobRows(store)
  return {
    async deploymentRoutes(deployment, port): Promise<ReplicaRoute[] | null> {
      const id = await idOf(deployment)
      if (id === null) return null
      return (await openJobs(id)).map((row) => ({
        job: row.job,
        ready: replicaOnline(nodes, row.job, port),
        draining: isDraining(manager.context, row),
      }))
    },
    holdsAtZero: holdsAtZeroByLabel(manager.context, idOf),
  }
}
