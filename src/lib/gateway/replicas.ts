/**
 * Which replicas a request to a deployment's stable URL goes to, in which order, and what is in flight to each:
 * the gateway's side of the seam in stable-url.ts. Apart from the proxying because a plain request and an upgrade
 * both ask it, and a request whose replica failed asks it again for the next one.
 */
import {type Upstream, type JobRoutes, splitLabel} from './job-routes.js'
import type {Reason} from './pages.js'
import {DEPLOYMENT_DOMAIN, type DeploymentRoutes, Ejections, ReplicaPicker} from './stable-url.js'

/**
 * How a replica that just went away fails a request before answering: the connection refused, timed out or
 * unreachable (a dead container's address), reset or closed before any byte of an answer (Node's "socket hang up"
 * is ECONNRESET), or abandoned because its service was withdrawn (ECONNABORTED). Such a request is sent again
 * to another replica when it may be, and the replica is ejected for a while.
 */
export const GONE: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNABORTED',
])

/** The error a connection to a replica is destroyed with when the gateway gives it up (`code` one of GONE). */
export function gone(code: string, message: string): Error {
  return Object.assign(new Error(message), {code})
}

/** The page to answer instead when a stable URL has no replica to send a request to. */
export interface NoReplica {
  status: number
  message: string
  reason: Reason
  /** The Retry-After it carries, in seconds (1 unless said). */
  retryAfter?: number
}

/** The replicas of deployments' stable URLs, as a DeploymentRoutes tells them and the routing table serves them. */
export class Replicas {
  readonly ejections: Ejections
  private deployments: DeploymentRoutes | null = null
  private readonly picker = new ReplicaPicker()
  /** Requests through a stable URL in flight to each job (lowercased): what a drain waits for. */
  private readonly inFlightByJob = new Map<string, number>()
  /** The same requests by deployment (its host label's name, lowercased): what an autoscaler follows. */
  private readonly inFlightByDeployment = new Map<string, number>()

  /** `gatewayPort` names the port in the page of a deployment unknown here. */
  constructor(
    private readonly routes: JobRoutes,
    ejectionMs: number,
    private readonly gatewayPort: () => number,
  ) {
    this.ejections = new Ejections(ejectionMs)
  }

  /** Asks `deployments` for deployments' replicas from now on, before each request. */
  use(deployments: DeploymentRoutes): void {
    this.deployments = deployments
  }

  /** Requests through a stable URL in flight to the job now (a drain waits for none). */
  inFlight(job: string): number {
    return this.inFlightByJob.get(job.toLowerCase()) ?? 0
  }

  /** Requests through a stable URL in flight per job (lowercased) now, jobs with none left out. */
  jobsInFlight(): Record<string, number> {
    return Object.fromEntries([...this.inFlightByJob].filter(([, n]) => n > 0))
  }

  /** The deployments (lowercased) with requests in flight now. */
  deploymentsInFlight(): string[] {
    return [...this.inFlightByDeployment.keys()]
  }

  /** Requests through the deployment's stable URLs (any port; `deployment` lowercased) in flight now. */
  deploymentInFlight(deployment: string): number {
    return this.inFlightByDeployment.get(deployment) ?? 0
  }

  /**
   * Counts one request in flight to the job through the stable URL of `label` (its deployment's host label); the
   * returned function, called once, counts it done.
   */
  track(job: string, label: string): () => void {
    const key = job.toLowerCase()
    const {name: deployment} = splitLabel(label)
    count(this.inFlightByJob, key, 1)
    count(this.inFlightByDeployment, deployment, 1)
    let done = false
    return () => {
      if (done) return
      done = true
      count(this.inFlightByJob, key, -1)
      count(this.inFlightByDeployment, deployment, -1)
    }
  }

  /**
   * The upstreams of a deployment's stable URL (its host's label), in the order to try them (round robin over the
   * replicas that are ready, not draining, and served here); a page to answer instead when there are none.
   */
  async of(label: string): Promise<Upstream[] | NoReplica> {
    const {name: deployment, port} = splitLabel(label)
    const what = port === null ? `deployment ${deployment}` : `port ${port} of deployment ${deployment}`
    let replicas
    try {
      replicas = this.deployments ? await this.deployments.deploymentRoutes(deployment, port) : null
    } catch (error) {
      const message = `The replicas of ${what} could not be read: ${(error as Error).message}`
      return {status: 503, message, reason: 'no-replica'}
    }
    if (replicas === null) {
      const message = `No deployment ${deployment} runs here: deployments answer at http://<deployment>.${DEPLOYMENT_DOMAIN}:${this.gatewayPort()}/.`
      return {status: 404, message, reason: 'no-service'}
    }
    const ready: Upstream[] = []
    for (const replica of [...replicas].sort((a, b) => (a.job < b.job ? -1 : a.job > b.job ? 1 : 0))) {
      // Its node has noticed: from now on the node's checks say when it serves again, not an ejection's end.
      if (!replica.ready) this.ejections.forget(replica.job)
      if (!replica.ready || replica.draining) continue
      if (replica.url !== undefined) {
        ready.push({job: replica.job, hostPort: 0, url: replica.url})
        continue
      }
      const hostPort = this.routes.hostPort(replica.job, port)
      if (hostPort) ready.push({job: replica.job, hostPort})
    }
    if (ready.length === 0) {
      const draining = replicas.filter((r) => r.draining).length
      const message =
        `No replica of ${what} is ready to serve (${replicas.length} replica(s), ${draining} draining): ` +
        'they are starting (health checks not passed yet), failing their health checks, or being replaced. Try again shortly.'
      return {status: 503, message, reason: 'no-replica'}
    }
    return this.ejectedLast(ready, (healthy) => this.picker.order(`${deployment}:${port ?? ''}`, healthy))
  }

  /**
   * Where a request goes after its upstream failed: the ones left (those ejected meanwhile last), or when none is
   * left and it came by a stable URL (`stable`, its label), the deployment's replicas read again (one that became
   * ready since), never one already tried.
   */
  async next(rest: Upstream[], stable: string | null, tried: Set<string>): Promise<Upstream[]> {
    let left = rest.filter((u) => !tried.has(u.job))
    if (left.length === 0 && stable !== null) {
      const fresh = await this.of(stable)
      left = Array.isArray(fresh) ? fresh.filter((u) => !tried.has(u.job)) : []
    }
    return this.ejectedLast(left)
  }

  /** The upstreams not ejected (in `order`), then those ejected lately: tried only when the others fail. */
  private ejectedLast(upstreams: Upstream[], order = (healthy: Upstream[]) => healthy): Upstream[] {
    const healthy = upstreams.filter((u) => !this.ejections.isEjected(u.job))
    const ejected = upstreams.filter((u) => this.ejections.isEjected(u.job))
    return [...order(healthy), ...ejected]
  }
}

/** Adds `by` to a count, dropping it at 0 so that the map holds only what is in flight. */
function count(counts: Map<string, number>, key: string, by: number): void {
  const left = (counts.get(key) ?? 0) + by
  if (left <= 0) counts.delete(key)
  else counts.set(key, left)
}
