/**
 * A manager's answer to its gateway's question "which replicas serve this deployment's port" (gateway/stable-url.ts),
 * from the store: which jobs are the deployment's open ones, read once per ROWS_REUSED_MS for all the requests of
 * that time. The localnet's gateway asks its nodes whether each serves (localnet/nodes/deployment-routes.ts);
 * `deployment serve`'s gateway goes to each replica's service URL, ready once the manager's own probe saw it serve
 * (the tunnel watch's `up`).
 */
import type {DeploymentRoutes, ReplicaRoute} from '../gateway/stable-url.js'
import {type ExposingDefinition, serviceUrls} from '../market/service-url.js'
import type {ManagerContext} from './context.js'
import {isDraining, ROWS_REUSED_MS} from './draining.js'
import {exposingDefinition} from './manager/serving.js'
import type {DeploymentStore} from './store/store.js'
import {ACTIVE_STATUSES, type JobRow} from './types.js'

/** Finds the id of an active deployment from its host label (lowercased); null for none. Ids seen are kept. */
export function deploymentIdsByLabel(
  store: Pick<DeploymentStore, 'deploymentsIn'>,
): (label: string) => Promise<string | null> {
  const ids = new Map<string, string>()
  return async (label) => {
    const known = ids.get(label)
    if (known) return known
    // Bounded by the active deployments, read again for a label not seen yet.
    if (ids.size > 10_000) ids.clear()
    for (const row of await store.deploymentsIn(ACTIVE_STATUSES)) ids.set(row.id.toLowerCase(), row.id)
    return ids.get(label) ?? null
  }
}

/** The open (QUEUED or RUNNING) job rows of a deployment, one read shared by the requests of ROWS_REUSED_MS. */
export function openJobRows(store: Pick<DeploymentStore, 'jobs'>): (deployment: string) => Promise<JobRow[]> {
  const open = new Map<string, {at: number; jobs: Promise<JobRow[]>}>()
  return (id) => {
    const now = Date.now()
    const cached = open.get(id)
    if (cached && now - cached.at < ROWS_REUSED_MS) return cached.jobs
    // Bounded by the active deployments; a read that failed is not kept.
    if (open.size > 10_000) open.clear()
    const jobs = store.jobs(id).then((rows) => rows.filter((row) => row.state === 'QUEUED' || row.state === 'RUNNING'))
    jobs.catch(() => open.delete(id))
    open.set(id, {at: now, jobs})
    return jobs
  }
}

/** Asks the manager whether the deployment of a host label holds its requests at zero (its policy's min is 0). */
export function holdsAtZeroByLabel(
  ctx: Pick<ManagerContext, 'holdsAtZero'>,
  idOf: (label: string) => Promise<string | null>,
): (label: string) => Promise<boolean> {
  return async (label) => {
    if (!ctx.holdsAtZero) return false
    const id = await idOf(label)
    return id !== null && (await ctx.holdsAtZero(id))
  }
}

/** The DeploymentRoutes of a gateway in front of replicas it does not run: their service URLs (`deployment serve`). */
export function serviceUrlRoutes(ctx: ManagerContext): DeploymentRoutes {
  const idOf = deploymentIdsByLabel(ctx.store)
  const openJobs = openJobRows(ctx.store)
  // A revision's definition never changes: kept by deployment and revision (bounded like the rows).
  const definitions = new Map<string, Promise<ExposingDefinition | null>>()
  const definitionOf = (id: string, revision: number) => {
    const key = `${id}:${revision}`
    if (definitions.size > 10_000) definitions.clear()
    const found = definitions.get(key) ?? exposingDefinition(ctx, id, revision)
    found.catch(() => definitions.delete(key))
    definitions.set(key, found)
    return found
  }
  const hosts = {networkHost: ctx.net.networkHost, gatewayUrl: ctx.net.gatewayUrl}
  return {
    async deploymentRoutes(deployment, port): Promise<ReplicaRoute[] | null> {
      const id = await idOf(deployment)
      if (id === null) return null
      const routes: ReplicaRoute[] = []
      for (const row of await openJobs(id)) {
        const definition = await definitionOf(id, row.revision)
        const urls = definition ? serviceUrls(ctx.network, row.job, definition, hosts) : []
        const url = (port === null ? urls[0] : urls.find((u) => u.port === port))?.url
        routes.push({
          job: row.job,
          // Its service answered the manager's probe (the tunnel watch's reading, each pass).
          ready: url !== undefined && row.state === 'RUNNING' && row.tunnel === 'up',
          // Marked by this manager (at once) or by the one draining it, through the row (within ROWS_REUSED_MS).
          draining: isDraining(ctx, row),
          ...(url === undefined ? {} : {url}),
        })
      }
      return routes
    },
    holdsAtZero: holdsAtZeroByLabel(ctx, idOf),
  }
}
