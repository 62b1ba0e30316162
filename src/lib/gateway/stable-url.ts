/**
 * The seam between the gateway and whoever knows a deployment's replicas: a deployment's stable URL,
 * `http://<deployment>.deploy.localhost:<gateway port>/` (and `<deployment>-P` for its exposed port P, as a job's
 * URL has it), is served by any replica that is ready and not draining. The gateway asks a DeploymentRoutes before
 * each request; the localnet answers from its deployment manager and its nodes (localnet/nodes/deployment-routes.ts).
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
  /**
   * Its service's own URL for the port, when this gateway does not serve the job itself (`deployment serve`'s,
   * in front of replicas on the network or the localnet's node gateway): requests go there.
   */
  url?: string
}

/** Who knows a deployment's replicas. */
export interface DeploymentRoutes {
  /**
   * The replicas of the deployment whose id, lowercased as host names are, is `deployment`, for its exposed `port`
   * (null: each job's first exposed port); null when no such deployment is known.
   */
  deploymentRoutes(deployment: string, port: number | null): Promise<ReplicaRoute[] | null>
  /**
   * True when the deployment's requests wait for a replica rather than being answered 503 while none is ready: its
   * policy scales it to zero (holding.ts). Absent: never.
   */
  holdsAtZero?(deployment: string): Promise<boolean>
}

/**
 * Methods sent again to another replica when the first fails before answering (only when they carry no body): the
 * idempotent ones, as proxies do (nginx's proxy_next_upstream never resends POST, LOCK or PATCH once sent).
 */
export const RETRIED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'])

/**
 * How long a connection to a replica may take. Replicas listen on 127.0.0.1, where a connection is made in well
 * under a millisecond; one that takes longer goes to a container that just died (podman's rules still send it to
 * the container's vanished address, which answers nothing until ARP gives up with EHOSTUNREACH after 3 s or more).
 */
export const CONNECT_TIMEOUT_MS = 1000

/**
 * How long a replica that failed a request (its connection refused, reset, timed out, or its service withdrawn with
 * the request unanswered) is skipped by the stable URL: long enough for its node's continuous checks to notice.
 */
export const EJECTION_MS = 5000

/**
 * Passive health checks (Envoy's outlier ejection): replicas that failed a request lately, skipped by the stable URL
 * until their ejection ends, or until their node reports them not ready (its own checks then decide their return).
 */
export class Ejections {
  /** Lowercased job -> when its ejection ends (ms since the epoch). */
  private readonly until = new Map<string, number>()

  constructor(private readonly ejectionMs = EJECTION_MS) {}

  /** Skips the job's replica from now on, for the ejection time. */
  eject(job: string, now = Date.now()): void {
    // Bounded: one entry per replica that failed lately; expired ones go first.
    if (this.until.size >= 10_000) this.sweep(now)
    if (this.until.size >= 10_000) this.until.clear()
    this.until.set(job.toLowerCase(), now + this.ejectionMs)
  }

  /** True while the job's replica is ejected. */
  isEjected(job: string, now = Date.now()): boolean {
    const end = this.until.get(job.toLowerCase())
    if (end === undefined) return false
    if (end > now) return true
    this.until.delete(job.toLowerCase())
    return false
  }

  /** Ends the job's ejection: its node says it is not ready, so its node's checks decide when it serves again. */
  forget(job: string): void {
    this.until.delete(job.toLowerCase())
  }

  private sweep(now: number): void {
    for (const [job, end] of this.until) if (end <= now) this.until.delete(job)
  }
}

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
