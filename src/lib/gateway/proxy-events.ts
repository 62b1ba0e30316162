/**
 * The lifecycle of the deployment proxies the gateway serves, published as the network's FRP server (frps) streams
 * it to the network's deployment manager (its `docs/frps-tunnel-health.md`): per (job, operation, port), a
 * `registered` when the proxy serves, an `unregistered` with its reason when it stops serving. `lost`: the workload
 * is unreachable (the member left its group after its failed checks, or its node is gone); `graceful`: its
 * operation ended and its node took the proxy down. A subscriber is first given the last event of each proxy (the
 * snapshot frps sends on connect), then every event as it comes.
 */

/** Why a proxy stopped serving, as frps says it. */
export type ProxyCloseReason = 'lost' | 'graceful'

/** One lifecycle event of a deployment proxy (a member of a load-balancer group `<deploymentHash>-<port>`). */
export interface ProxyEvent {
  type: 'registered' | 'unregistered'
  job: string
  /** The operation's id (frpc's `opId` metadata). */
  opId: string
  port: number
  /** The definition's `deployment_id` (frpc's `deploymentId` metadata); none when the node was not told it. */
  deploymentId?: string
  /** `unregistered` only. */
  reason?: ProxyCloseReason
  /** ms */
  timestamp: number
}

/** What a manager subscribes to: the snapshot of each proxy's last event, then the live ones. */
export interface ProxyEventSource {
  /** Calls `listener` with the snapshot, then with each new event, in order; answers the unsubscribe. */
  subscribe(listener: (event: ProxyEvent) => void): () => void
}

/**
 * The most proxies whose last event is kept for the snapshot: frps keeps a down proxy's events for 24 h; the
 * localnet's gateway keeps the latest ones, the oldest dropped first past this.
 */
export const PROXY_SNAPSHOT_MAX = 10_000

/** The proxies' events: the last of each kept for a new subscriber, every new one sent to the subscribers. */
export class ProxyEvents implements ProxyEventSource {
  /** `job/opId/port` -> its last event, oldest first (a Map keeps insertion order; a new event moves to the end). */
  private readonly last = new Map<string, ProxyEvent>()
  private readonly listeners = new Set<(event: ProxyEvent) => void>()

  constructor(private readonly max = PROXY_SNAPSHOT_MAX) {}

  /** Publishes an event to the subscribers and keeps it as its proxy's last. */
  publish(event: ProxyEvent): void {
    const key = `${event.job}/${event.opId}/${event.port}`
    this.last.delete(key)
    this.last.set(key, event)
    if (this.last.size > this.max) this.last.delete(this.last.keys().next().value!)
    for (const listener of this.listeners) listener(event)
  }

  /** Each proxy's last event, oldest first. */
  snapshot(): ProxyEvent[] {
    return [...this.last.values()]
  }

  subscribe(listener: (event: ProxyEvent) => void): () => void {
    for (const event of this.snapshot()) listener(event)
    this.listeners.add(listener)
    return () => void this.listeners.delete(listener)
  }
}
