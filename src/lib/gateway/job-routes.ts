/**
 * The gateway's table of jobs' ports: which container ports each job exposes, which host port on 127.0.0.1 serves
 * each once its health checks pass, and what is under way to those host ports, so that a port taken down gives up
 * its requests and resets its tunnels at once instead of leaving them to time out. Kept apart from the server: the
 * node drives it (register, ready, withdraw, remove), every request reads it, by the label of its host name.
 */
import type {IncomingMessage} from 'node:http'

/** The host name suffix of job services; browsers resolve `*.localhost` to the loopback address. */
export const GATEWAY_DOMAIN = 'node.localhost'

/** The host name's label before `.node.localhost` (or `domain`), lowercased; null for any other host. */
export function hostLabel(req: IncomingMessage, domain = GATEWAY_DOMAIN): string | null {
  const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '')
  return host.endsWith(`.${domain}`) ? host.slice(0, -domain.length - 1) : null
}

/** Where one request goes: a job's port published on 127.0.0.1. */
export interface Upstream {
  job: string
  hostPort: number
  /**
   * The replica's own URL, for one not served on 127.0.0.1 by this gateway (`deployment serve`'s gateway in front of
   * replicas on the network): requests go there with its host, over TLS for https. Absent: `hostPort`.
   */
  url?: string
}

/** Where a connection to the upstream goes, and the Host its requests carry (null: the client's, unchanged). */
export function upstreamAddress(upstream: Upstream): {
  host: string
  port: number
  tls: boolean
  hostHeader: string | null
} {
  if (upstream.url === undefined) return {host: '127.0.0.1', port: upstream.hostPort, tls: false, hostHeader: null}
  const url = new URL(upstream.url)
  const tls = url.protocol === 'https:'
  // *.localhost is the loopback address (RFC 6761), which not every resolver knows: the localnet's gateway.
  const host = url.hostname === 'localhost' || url.hostname.endsWith('.localhost') ? '127.0.0.1' : url.hostname
  return {host, port: Number(url.port) || (tls ? 443 : 80), tls, hostHeader: url.host}
}

/**
 * A request or tunnel to a job's host port; `abandon` gives it up when its service is gone (a request not answered
 * yet is sent to another replica when it may be; a tunnel or an answer under way is reset).
 */
export interface Pending {
  hostPort: number
  abandon: () => void
}

interface Route {
  /** The container port served at the job's own URL. */
  primary: number
  /** Container port -> host port on 127.0.0.1; null until that port's health checks pass. */
  ports: Map<number, number | null>
}

/** A host label split into the job or deployment it names and its `-P` port (null: its first exposed port). */
export function splitLabel(label: string): {name: string; port: number | null} {
  const [, name = label, port] = /^(.*)-(\d+)$/.exec(label) ?? []
  return {name, port: port === undefined ? null : Number(port)}
}

/** Jobs' exposed ports, keyed by the lowercased job address: browsers lowercase host names, base58 is mixed case. */
export class JobRoutes {
  private readonly routes = new Map<string, Route>()
  /** Requests sent to each job (lowercased) whose answer has not begun. */
  private readonly unanswered = new Map<string, Set<Pending>>()
  /** Tunnels and answers under way to each job (lowercased): reset when its service is taken down. */
  private readonly open = new Map<string, Set<Pending>>()

  /** The container port served at the job's own URL; null when it serves none. */
  primaryPort(job: string): number | null {
    return this.routes.get(job.toLowerCase())?.primary ?? null
  }

  /** The host port serving the job's exposed `port` (null: its primary one); null while none does. */
  hostPort(job: string, port: number | null): number | null {
    const route = this.routes.get(job.toLowerCase())
    return route?.ports.get(port ?? route.primary) ?? null
  }

  /** Announces exposed ports of a job (the first is the primary one unless one announced earlier is still there). */
  register(job: string, ports: readonly number[]): void {
    const [first] = ports
    if (first === undefined) return
    const route = this.routes.get(job.toLowerCase()) ?? {primary: first, ports: new Map<number, number | null>()}
    for (const port of ports) route.ports.set(port, null)
    this.routes.set(job.toLowerCase(), route)
  }

  /** Takes down the given ports of a job, giving up what is under way to them; the primary moves to one left. */
  withdraw(job: string, ports: readonly number[]): void {
    const route = this.routes.get(job.toLowerCase())
    if (!route) return
    const hostPorts = new Set(ports.map((port) => route.ports.get(port)).filter((p) => typeof p === 'number'))
    this.abandon(job, (hostPort) => hostPorts.has(hostPort))
    for (const port of ports) route.ports.delete(port)
    const [left] = route.ports.keys()
    if (left === undefined) this.routes.delete(job.toLowerCase())
    else if (!route.ports.has(route.primary)) route.primary = left
  }

  /** Sends the traffic of the job's exposed `port` to `hostPort` on 127.0.0.1 from now on. */
  ready(job: string, port: number, hostPort: number): void {
    const route = this.routes.get(job.toLowerCase())
    if (route?.ports.has(port)) route.ports.set(port, hostPort)
  }

  /** Takes all the job's ports down, giving up what is under way to them. */
  remove(job: string): void {
    this.routes.delete(job.toLowerCase())
    this.abandon(job, () => true)
  }

  /** Counts a request to the job as unanswered; the returned function, called once or more, counts it answered. */
  awaitAnswer(job: string, pending: Pending): () => void {
    return enter(this.unanswered, job, pending)
  }

  /** Holds a tunnel or an answer under way to the job; the returned function, called once or more, lets it go. */
  hold(job: string, pending: Pending): () => void {
    return enter(this.open, job, pending)
  }

  /** Gives up the job's unanswered requests and resets its tunnels and answers under way on the ports `which` picks. */
  private abandon(job: string, which: (hostPort: number) => boolean): void {
    for (const registry of [this.unanswered, this.open])
      for (const pending of [...(registry.get(job.toLowerCase()) ?? [])]) if (which(pending.hostPort)) pending.abandon()
  }
}

/** Adds `pending` to the job's set in `registry`; the returned function, called once or more, takes it out. */
function enter(registry: Map<string, Set<Pending>>, job: string, pending: Pending): () => void {
  const key = job.toLowerCase()
  const set = registry.get(key) ?? new Set<Pending>()
  set.add(pending)
  registry.set(key, set)
  return () => {
    set.delete(pending)
    if (set.size === 0 && registry.get(key) === set) registry.delete(key)
  }
}
