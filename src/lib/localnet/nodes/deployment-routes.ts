/**
 * The localnet's answer to the gateway's question "which replicas serve this deployment's port": the deployment
 * manager's rows say which jobs belong to the deployment and which are draining, the nodes running them say whether
 * the port is ONLINE (its health checks, the continuous ones included).
 */
import {deploymentIdsByLabel} from '../../deployments/autoscale/gateway-load.js'
import {isDraining} from '../../deployments/draining.js'
import type {RunningManager} from '../../deployments/manager.js'
import {portLabel} from '../../market/service-url.js'
import type {DeploymentRoutes, ReplicaRoute} from '../../gateway/stable-url.js'
import type {RunningNode} from './node-agent.js'

/**
 * How long the jobs of a deployment, as its rows list them, are reused: the stable URL asks before every request,
 * and reading the rows each time (every job the deployment ever had) costs more than the request itself. Safe to
 * reuse: whether each job serves (its node's checks, the gateway's routes) and drains is read live; only a new
 * replica waits this long longer before it gets requests.
 */
export const ROWS_REUSED_MS = 250

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
  // Deployment id -> its open jobs, as read at `at` (one read shared by the requests that wait for it).
  const open = new Map<string, {at: number; jobs: Promise<string[]>}>()
  const openJobs = (id: string): Promise<string[]> => {
    const now = Date.now()
    const cached = open.get(id)
    if (cached && now - cached.at < ROWS_REUSED_MS) return cached.jobs
    // Bounded by the active deployments; a read that failed is not kept.
    if (open.size > 10_000) open.clear()
    const jobs = store
      .jobs(id)
      .then((rows) => rows.filter((row) => row.state === 'QUEUED' || row.state === 'RUNNING').map((row) => row.job))
    jobs.catch(() => open.delete(id))
    open.set(id, {at: now, jobs})
    return jobs
  }
  return {
    async deploymentRoutes(deployment, port): Promise<ReplicaRoute[] | null> {
      const id = await idOf(deployment)
      if (id === null) return null
      return (await openJobs(id)).map((job) => ({
        job,
        ready: replicaOnline(nodes, job, port),
        draining: isDraining(manager.context, job),
      }))
    },
    async holdsAtZero(deployment) {
      const id = manager.context.holdsAtZero ? await idOf(deployment) : null
      return id !== null && (await manager.context.holdsAtZero!(id))
    },
  }
}
