/**
 * The seam between the gateway and whoever knows a deployment's replicas: a deployment's stable URL,
 * `http://<deployment>.deploy.localhost:<gateway port>/` (and `<deployment>-P` for its exposed port P, as a job's
 * URL has it), is served by any replica that is ready and not draining. The gateway asks a DeploymentRoutes before
 * each request; the localnet answers from its deployment manager and its nodes (localnet/deployment-routes.ts).
 */

/** The host name suffix of deployments' stable URLs; browsers resolve `*.localhost` to the loopback address. */
export const DEPLOYMENT_DOMAIN = 'deploy.localhost'

/** One replica of a deployment, as the gateway needs it for one port. */
export interface ReplicaRoute {
  /** The replica's job address. */
  job: string
  /** Its node says the port passes its health checks (the continuous ones included): ONLINE. */
  ready: boolean
  /** Being retired: it gets no new request; those in flight finish. */
  draining: boolean
}

/** Who knows a deployment's replicas. */
export interface DeploymentRoutes {
  /**
   * The replicas of the deployment whose id, lowercased as host names are, is `deployment`, for its exposed `port`
   * (null: each job's first exposed port); null when no such deployment is known.
   */
  deploymentRoutes(deployment: string, port: number | null): Promise<ReplicaRoute[] | null>
}

/** Methods sent again to another replica when the first refuses the connection (only when they carry no body). */
export const RETRIED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'])

/** Round robin over each (deployment, port)'s replicas, so requests spread evenly whatever the replicas' order. */
export class ReplicaPicker {
  private readonly turns = new Map<string, number>()

  /** The replica whose turn it is, and the others in the order a retry takes them. */
  order<T>(key: string, candidates: readonly T[]): T[] {
    // Bounded: host names are the client's to choose.
    if (this.turns.size > 10_000) this.turns.clear()
    const turn = this.turns.get(key) ?? 0
    this.turns.set(key, (turn + 1) % 1_000_000_007)
    const start = turn % candidates.length
    return [...candidates.slice(start), ...candidates.slice(0, start)]
  }
}
