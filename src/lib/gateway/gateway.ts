/**
 * The node gateway: serves each job's first exposed port at `http://<job>.node.localhost:<port>/`, and every
 * exposed port P also at `http://<job>-P.node.localhost:<port>/`, routing on the Host header and proxying HTTP
 * requests and websocket upgrades to the port the container publishes on 127.0.0.1. A job whose service is not
 * ready (or gone) answers a page-not-found page. Each node's own API answers at `http://<node>.node.localhost:<port>/`
 * (the localnet's nodes share one gateway). A deployment's stable URL, `http://<deployment>.deploy.localhost:<port>/`
 * (stable-url.ts), is spread over its ready replicas that are not draining; none ready is a 503.
 */
import {once} from 'node:events'
import {
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
  validateHeaderName,
  validateHeaderValue,
} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'
import {connect} from 'node:net'
import {type Duplex, pipeline} from 'node:stream'

import {type LoopbackPolicy, webPageRefusal} from '../http/loopback-guard.js'
import {portLabel} from '../market/service-url.js'
import type {NodeApi} from '../node/api-server/server.js'
import {GATEWAY_ANSWER_HEADER} from '../node/gateway-answer.js'
import {
  CONNECT_TIMEOUT_MS,
  DEPLOYMENT_DOMAIN,
  type DeploymentRoutes,
  EJECTION_MS,
  Ejections,
  ReplicaPicker,
  RETRIED_METHODS,
} from './stable-url.js'

/** Default gateway port: clear of the localnet's JSON-RPC and WebSocket pair (28899, 28900). */
export const DEFAULT_GATEWAY_PORT = 28980

/** The host name suffix of job services; browsers resolve `*.localhost` to the loopback address. */
export const GATEWAY_DOMAIN = 'node.localhost'

/**
 * Connections the gateway holds at once (Node's `server.maxConnections`); more are closed as they come. Four
 * sources at their cap fill it; each connection is one descriptor, a tunnel two (docs/node.md).
 */
export const MAX_GATEWAY_CONNECTIONS = 1024

/**
 * Connections one source address holds at once. Every client of a localnet is 127.0.0.1, so this is above what a
 * local user holds on purpose: an autoscaler's 100 requests held at once, the suites' own concurrency (150 held in
 * the gateway's tests) and the node API's 32 sockets per address. Past it, a new connection closes the source's
 * oldest idle one (no request being answered: waiting for its headers, or kept alive between requests), as nginx
 * reuses its idle keep-alive connections when it runs out; with none idle, the new one is closed.
 */
export const MAX_GATEWAY_CONNECTIONS_PER_SOURCE = 256

/** A connection must send a request's headers within this (Node's default is 60 s): idle ones hold a slot. */
export const GATEWAY_HEADERS_TIMEOUT_MS = 10_000

/**
 * A request (its headers and body) must be received within this (Node's `requestTimeout`, its default made
 * explicit): a body sent a byte at a time holds its connection no longer. Uploads on loopback take seconds.
 */
export const GATEWAY_REQUEST_TIMEOUT_MS = 300_000

/** A kept-alive connection idle this long between requests is closed (Node's `keepAliveTimeout`, its default). */
export const GATEWAY_KEEP_ALIVE_TIMEOUT_MS = 5000

/**
 * How long a job's service may stay silent before the head of its answer (an HTTP answer or an upgrade's),
 * counted from the last byte either way: then the request is given up (resent to another replica of a stable URL
 * when it may be, the replica ejected). Above the 120 s a service may hold a request (long polls, an autoscaler's
 * held requests), with room; an answer once begun, or a tunnel once upgraded, has no idle bound while open both ways.
 */
export const GATEWAY_ANSWER_TIMEOUT_MS = 180_000

/**
 * How long a tunnel one side has half-closed may stay idle before both sides are ended: what is left to send is
 * sent in that time (a service never closing its side held a connection for good).
 */
export const GATEWAY_TUNNEL_HALF_CLOSED_MS = 10_000

/** The largest head of an upgrade's answer the gateway reads (Node's own limit for a request's headers). */
const MAX_UPGRADE_ANSWER_HEAD = 16 * 1024

/** The gateway serves its own name, every job's and every deployment's; a page is same-origin with itself only. */
const POLICY: LoopbackPolicy = {
  servesName: (name) =>
    name === GATEWAY_DOMAIN || name.endsWith(`.${GATEWAY_DOMAIN}`) || name.endsWith(`.${DEPLOYMENT_DOMAIN}`),
}

/** Where one request goes: a job's port published on 127.0.0.1. */
interface Upstream {
  job: string
  hostPort: number
}

/**
 * How a replica that just went away fails a request before answering: the connection refused, timed out or
 * unreachable (a dead container's address), reset or closed before any byte of an answer (Node's "socket hang up"
 * is ECONNRESET), or abandoned because its service was withdrawn (ECONNABORTED, below). Such a request is sent again
 * to another replica when it may be, and the replica is ejected for a while.
 */
const GONE: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNABORTED',
])

/**
 * A request or tunnel to a job's host port; `abandon` gives it up when its service is gone (a request not answered
 * yet is sent to another replica when it may be; a tunnel or an answer under way is reset).
 */
interface Pending {
  hostPort: number
  abandon: () => void
}

/** One client connection of a source: how many of its requests are being answered, and whether it is a tunnel. */
interface Held {
  busy: number
  tunnel: boolean
}

type Reason = 'not-ready' | 'no-service' | 'unreachable' | 'refused' | 'no-replica' | 'invalid-answer'

interface Route {
  /** The container port served at the job's own URL. */
  primary: number
  /** Container port -> host port on 127.0.0.1; null until that port's health checks pass. */
  ports: Map<number, number | null>
}

/** Serves exposed ports of the jobs the node runs. */
export class Gateway {
  /** Keyed by the lowercased job address: browsers lowercase host names, base58 is mixed case. */
  private readonly routes = new Map<string, Route>()
  private readonly server: Server
  private port = 0
  /** Each node's API by its lowercased address: a localnet's nodes share one gateway. */
  private readonly nodeApis = new Map<string, NodeApi>()
  private deployments: DeploymentRoutes | null = null
  private readonly picker = new ReplicaPicker()
  /** Requests through a stable URL in flight to each job (lowercased): what a drain waits for. */
  private readonly inFlightByJob = new Map<string, number>()
  /** Requests sent to each job (lowercased) whose answer has not begun. */
  private readonly unanswered = new Map<string, Set<Pending>>()
  /** Tunnels and answers under way to each job (lowercased): reset when its service is taken down. */
  private readonly open = new Map<string, Set<Pending>>()
  /** Client connections by source address, oldest first. */
  private readonly held = new Map<string, Map<Socket, Held>>()
  private readonly ejections: Ejections
  private readonly connectTimeoutMs: number
  private readonly answerTimeoutMs: number
  private readonly halfClosedMs: number
  private readonly maxPerSource: number
  private readonly policy: LoopbackPolicy

  constructor(
    options: {
      headersTimeoutMs?: number
      connectTimeoutMs?: number
      ejectionMs?: number
      answerTimeoutMs?: number
      tunnelHalfClosedMs?: number
      maxConnectionsPerSource?: number
      /** Browser origins allowed besides a page's own (the allowOrigin setting). */
      allowedOrigins?: readonly string[]
    } = {},
  ) {
    this.policy = {...POLICY, allowedOrigins: options.allowedOrigins}
    const headersTimeout = options.headersTimeoutMs ?? GATEWAY_HEADERS_TIMEOUT_MS
    this.connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS
    this.answerTimeoutMs = options.answerTimeoutMs ?? GATEWAY_ANSWER_TIMEOUT_MS
    this.halfClosedMs = options.tunnelHalfClosedMs ?? GATEWAY_TUNNEL_HALF_CLOSED_MS
    this.maxPerSource = options.maxConnectionsPerSource ?? MAX_GATEWAY_CONNECTIONS_PER_SOURCE
    this.ejections = new Ejections(options.ejectionMs ?? EJECTION_MS)
    this.server = createServer(
      {
        headersTimeout,
        requestTimeout: GATEWAY_REQUEST_TIMEOUT_MS,
        keepAliveTimeout: GATEWAY_KEEP_ALIVE_TIMEOUT_MS,
        // Checked often enough that an idle connection goes soon after its deadline.
        connectionsCheckingInterval: Math.min(1000, headersTimeout),
      },
      (req, res) => guard(() => this.serve(req, res), res),
    )
    this.server.maxConnections = MAX_GATEWAY_CONNECTIONS
    this.server.on('connection', (socket: Socket) => this.admit(socket))
    this.server.on('upgrade', (req, socket, head) => guard(() => this.upgrade(req, socket, head), socket))
  }

  /**
   * Holds a new connection within its source's cap: past it, the source's oldest idle connection is closed to
   * make room, or (none idle) the new one is.
   */
  private admit(socket: Socket): void {
    const source = socket.remoteAddress ?? ''
    const mine = this.held.get(source) ?? new Map<Socket, Held>()
    if (mine.size >= this.maxPerSource) {
      const idle = [...mine].find(([, held]) => held.busy === 0 && !held.tunnel)
      if (!idle) return void socket.destroy()
      mine.delete(idle[0])
      idle[0].destroy()
    }
    mine.set(socket, {busy: 0, tunnel: false})
    this.held.set(source, mine)
    socket.once('close', () => {
      mine.delete(socket)
      if (mine.size === 0 && this.held.get(source) === mine) this.held.delete(source)
    })
  }

  /** What the gateway holds of the connection (null when it was closed meanwhile). */
  private heldOf(socket: Duplex): Held | null {
    const net = socket as Socket
    return this.held.get(net.remoteAddress ?? '')?.get(net) ?? null
  }

  /** Listens on 127.0.0.1 (`port` 0 picks a free one) and returns the base URL, `http://node.localhost:<port>`. */
  async listen(port: number): Promise<string> {
    this.server.listen(port, '127.0.0.1')
    await Promise.race([
      once(this.server, 'listening'),
      once(this.server, 'error').then(([error]) => Promise.reject(error)),
    ])
    this.port = (this.server.address() as AddressInfo).port
    return this.url
  }

  get url(): string {
    return `http://${GATEWAY_DOMAIN}:${this.port}`
  }

  /** The URL a job's first exposed port is served at, or that of exposed port `port`. */
  jobUrl(job: string, port?: number): string {
    return `http://${port === undefined ? job : portLabel(job, port)}.${GATEWAY_DOMAIN}:${this.port}/`
  }

  /** The stable URL of a deployment's first exposed port, or of its exposed port `port`. */
  deploymentUrl(deployment: string, port?: number): string {
    return `http://${port === undefined ? deployment : portLabel(deployment, port)}.${DEPLOYMENT_DOMAIN}:${this.port}/`
  }

  /** Serves deployments' stable URLs from now on, asking `routes` for their replicas before each request. */
  useDeployments(routes: DeploymentRoutes): void {
    this.deployments = routes
  }

  /** Requests through a stable URL in flight to the job now (a drain waits for none). */
  inFlight(job: string): number {
    return this.inFlightByJob.get(job.toLowerCase()) ?? 0
  }

  /** The container port served at the job's own URL; null when it serves none. */
  primaryPort(job: string): number | null {
    return this.routes.get(job.toLowerCase())?.primary ?? null
  }

  /** Serves a node's API at `http://<node>.node.localhost:<port>/` (each node of the localnet mounts its own). */
  mountNodeApi(node: string, api: NodeApi): void {
    this.nodeApis.set(node.toLowerCase(), api)
  }

  /**
   * Announces exposed ports of a job (the first one also at the job's URL, unless a port announced earlier is
   * still there): each answers 404 until `ready`. Operations running side by side each announce their own.
   */
  register(job: string, ports: readonly number[]): void {
    const [first] = ports
    if (first === undefined) return
    const route = this.routes.get(job.toLowerCase()) ?? {primary: first, ports: new Map<number, number | null>()}
    for (const port of ports) route.ports.set(port, null)
    this.routes.set(job.toLowerCase(), route)
  }

  /**
   * Takes down the given ports of a job (an operation that ended); the job's URL moves to a port still served.
   * Requests sent to those ports and not answered yet never will be: they are given up (sent to another replica
   * when they may be).
   */
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

  /** Takes the job's service down; the requests sent to it and not answered yet are given up. */
  remove(job: string): void {
    this.routes.delete(job.toLowerCase())
    this.abandon(job, () => true)
  }

  /** Gives up the job's unanswered requests and resets its tunnels and answers under way on the ports `which` picks. */
  private abandon(job: string, which: (hostPort: number) => boolean): void {
    for (const registry of [this.unanswered, this.open])
      for (const pending of [...(registry.get(job.toLowerCase()) ?? [])]) if (which(pending.hostPort)) pending.abandon()
  }

  /** Counts a request to the job as unanswered; the returned function, called once or more, counts it answered. */
  private awaitAnswer(job: string, pending: Pending): () => void {
    return enter(this.unanswered, job, pending)
  }

  /** Stops serving and drops open connections, tunnels included (Node's closeAllConnections leaves those). */
  async close(): Promise<void> {
    for (const api of this.nodeApis.values()) api.close()
    this.server.closeAllConnections()
    for (const mine of this.held.values()) for (const socket of mine.keys()) socket.destroy()
    await new Promise((resolve) => this.server.close(resolve))
  }

  /** The host name's label before `.node.localhost` (or `domain`), lowercased; null for any other host. */
  private label(req: IncomingMessage, domain = GATEWAY_DOMAIN): string | null {
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '')
    return host.endsWith(`.${domain}`) ? host.slice(0, -domain.length - 1) : null
  }

  private apiFor(req: IncomingMessage): NodeApi | null {
    const label = this.label(req)
    return label === null ? null : (this.nodeApis.get(label) ?? null)
  }

  /** The host's label, the job it names (without its `-P`) and the host port serving it, when one does. */
  private target(req: IncomingMessage): {label: string | null; job: string; hostPort: number | null} {
    const label = this.label(req)
    if (label === null) return {label: null, job: '', hostPort: null}
    const [, job = label, port] = /^(.*)-(\d+)$/.exec(label) ?? []
    const route = this.routes.get(job)
    const hostPort = route?.ports.get(port === undefined ? route.primary : Number(port))
    return {label, job, hostPort: hostPort ?? null}
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    // Busy while its answer is under way: a connection is idle (may make room for another) only between requests.
    const held = this.heldOf(req.socket)
    if (held) {
      held.busy++
      res.once('close', () => held.busy--)
    }
    const refusal = webPageRefusal(req, this.policy)
    if (refusal) return sendPage(req, res, refusal.status, 'Refused', refusal.message, 'refused')
    const api = this.apiFor(req)
    if (api) return api.serve(req, res)
    const deployment = this.label(req, DEPLOYMENT_DOMAIN)
    if (deployment !== null) return void this.serveDeployment(req, res, deployment).catch(() => res.destroy())
    const {label, job, hostPort} = this.target(req)
    if (hostPort === null) return notFound(req, res, label)
    this.forward(req, res, [{job, hostPort}], null)
  }

  /**
   * Proxies the request to the first upstream. When that one fails before any byte of an answer (GONE, or no
   * connection within the connect timeout) and the request can be sent again (an idempotent method without a body),
   * it goes to the next, as nginx's proxy_next_upstream does; a stable URL's replica that failed is ejected for a
   * while. `stable` (a stable URL's label) counts the request in flight to its job, ejects a failed replica, and
   * when the upstreams given are all tried, asks for the deployment's replicas again (each is tried once).
   */
  private forward(
    req: IncomingMessage,
    res: ServerResponse,
    upstreams: Upstream[],
    stable: string | null,
    tried = new Set<string>(),
  ): void {
    const [target, ...rest] = upstreams as [Upstream, ...Upstream[]]
    tried.add(target.job)
    const resend = RETRIED_METHODS.has(req.method ?? '') && !hasBody(req)
    const track = stable !== null
    const release = track ? this.track(target.job) : () => {}
    res.once('close', release)
    /** The service's answer was refused (invalidAnswer) and the gateway answers 502 itself. */
    let replaced = false
    const upstream = request(
      {host: '127.0.0.1', port: target.hostPort, method: req.method, path: req.url, headers: req.headers},
      (answer) => {
        answered()
        // Answering: a quiet stream is not cut; the job's end resets it.
        upstream.setTimeout(0)
        res.once('close', enter(this.open, target.job, {hostPort: target.hostPort, abandon: () => res.destroy()}))
        const problem = invalidAnswer(answer)
        if (problem !== null) {
          replaced = true
          // A service that breaks HTTP once is not trusted with another request on the same connection.
          answer.destroy()
          const message = `The job service's answer cannot be passed on: ${problem}.`
          return sendPage(req, res, 502, 'Bad gateway', message, 'invalid-answer')
        }
        try {
          res.writeHead(answer.statusCode!, withoutGatewayHeader(answer.rawHeaders))
        } catch {
          // Checked above; should Node still refuse it, the response is half set up, so no page is written on it:
          // the client's connection ends, the gateway goes on.
          answer.destroy()
          return void res.destroy()
        }
        // pipeline, not pipe: an answer cut short (a body shorter than its length, broken chunks) ends the
        // client's connection too, instead of leaving it waiting for bytes that never come.
        pipeline(answer, res, () => {})
      },
    )
    const fail = (code: string, message: string) => upstream.destroy(Object.assign(new Error(message), {code}))
    const answered = this.awaitAnswer(target.job, {
      hostPort: target.hostPort,
      abandon: () => fail('ECONNABORTED', 'the service was withdrawn before it answered'),
    })
    upstream.on('socket', (socket) => {
      if (!socket.connecting) return
      const timer = setTimeout(
        () => fail('ETIMEDOUT', 'no connection within the connect timeout'),
        this.connectTimeoutMs,
      )
      socket.once('connect', () => clearTimeout(timer))
      socket.once('close', () => clearTimeout(timer))
    })
    // A replica that accepts and never answers (silent from the last byte either way) is given up as one gone.
    upstream.setTimeout(this.answerTimeoutMs, () => fail('ETIMEDOUT', 'no answer within the answer timeout'))
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      answered()
      if (res.headersSent) {
        // The gateway's own 502 for an answer it refused is on its way: it is not cut.
        if (!replaced) res.destroy()
        return
      }
      const gone = GONE.has(error.code ?? '')
      // A kept-alive connection the replica closed as it was reused is a race any client meets, not a failing
      // replica: resent, not ejected (a replica truly gone refuses the next connection, and is ejected then).
      const raced = upstream.reusedSocket && error.code === 'ECONNRESET'
      if (gone && track && !raced) this.ejections.eject(target.job)
      // Node's parser refused the answer's status line, headers or framing (HPE_*): the service did answer.
      if (error.code?.startsWith('HPE_')) {
        const message = `The job service's answer is not valid HTTP: ${error.message.replace(/^Parse Error: /, '')}.`
        return sendPage(req, res, 502, 'Bad gateway', message, 'invalid-answer')
      }
      if (!resend || !gone || res.destroyed)
        return sendPage(req, res, 502, 'Bad gateway', 'The job service did not answer.', 'unreachable')
      // A replica going away: the next one takes the request, so the client never sees it.
      res.off('close', release)
      release()
      void this.nextUpstreams(rest, stable, tried)
        .then((next) => {
          if (res.destroyed) return
          if (next.length > 0) return this.forward(req, res, next, stable, tried)
          sendPage(req, res, 502, 'Bad gateway', 'The job service did not answer.', 'unreachable')
        })
        .catch(() => res.destroy())
    })
    // Without a body the request is complete as it is, and can be sent again as it is.
    if (resend) upstream.end()
    else req.pipe(upstream)
  }

  /**
   * Where a request goes after its upstream failed: the ones left (those ejected meanwhile last), or when none is
   * left and it came by a stable URL, the deployment's replicas read again (one that became ready since), never
   * one already tried.
   */
  private async nextUpstreams(rest: Upstream[], stable: string | null, tried: Set<string>): Promise<Upstream[]> {
    let left = rest.filter((u) => !tried.has(u.job))
    if (left.length === 0 && stable !== null) {
      const fresh = await this.replicas(stable)
      left = Array.isArray(fresh) ? fresh.filter((u) => !tried.has(u.job)) : []
    }
    return [
      ...left.filter((u) => !this.ejections.isEjected(u.job)),
      ...left.filter((u) => this.ejections.isEjected(u.job)),
    ]
  }

  /** Counts one request in flight to the job; the returned function, called once, counts it done. */
  private track(job: string): () => void {
    const key = job.toLowerCase()
    this.inFlightByJob.set(key, (this.inFlightByJob.get(key) ?? 0) + 1)
    let done = false
    return () => {
      if (done) return
      done = true
      const left = (this.inFlightByJob.get(key) ?? 1) - 1
      if (left <= 0) this.inFlightByJob.delete(key)
      else this.inFlightByJob.set(key, left)
    }
  }

  /**
   * The upstreams of a deployment's stable URL, in the order to try them (round robin over the replicas that are
   * ready, not draining, and served here); a page to answer instead when there are none.
   */
  private async replicas(label: string): Promise<Upstream[] | {status: number; message: string; reason: Reason}> {
    const [, deployment = label, given] = /^(.*)-(\d+)$/.exec(label) ?? []
    const port = given === undefined ? null : Number(given)
    const what = port === null ? `deployment ${deployment}` : `port ${port} of deployment ${deployment}`
    let replicas
    try {
      replicas = this.deployments ? await this.deployments.deploymentRoutes(deployment, port) : null
    } catch (error) {
      const message = `The replicas of ${what} could not be read: ${(error as Error).message}`
      return {status: 503, message, reason: 'no-replica'}
    }
    if (replicas === null) {
      const message = `No deployment ${deployment} runs here: deployments answer at http://<deployment>.${DEPLOYMENT_DOMAIN}:${this.port}/.`
      return {status: 404, message, reason: 'no-service'}
    }
    const ready: Upstream[] = []
    for (const replica of [...replicas].sort((a, b) => (a.job < b.job ? -1 : a.job > b.job ? 1 : 0))) {
      // Its node has noticed: from now on the node's checks say when it serves again, not an ejection's end.
      if (!replica.ready) this.ejections.forget(replica.job)
      if (!replica.ready || replica.draining) continue
      const route = this.routes.get(replica.job.toLowerCase())
      const hostPort = route?.ports.get(port ?? route.primary)
      if (hostPort) ready.push({job: replica.job, hostPort})
    }
    if (ready.length === 0) {
      const draining = replicas.filter((r) => r.draining).length
      const message =
        `No replica of ${what} is ready to serve (${replicas.length} replica(s), ${draining} draining): ` +
        'they are starting (health checks not passed yet), failing their health checks, or being replaced. Try again shortly.'
      return {status: 503, message, reason: 'no-replica'}
    }
    // Replicas ejected lately come last, tried only when the others fail (all of them when all are ejected).
    const healthy = ready.filter((u) => !this.ejections.isEjected(u.job))
    const ejected = ready.filter((u) => this.ejections.isEjected(u.job))
    return [...this.picker.order(`${deployment}:${port ?? ''}`, healthy), ...ejected]
  }

  private async serveDeployment(req: IncomingMessage, res: ServerResponse, label: string): Promise<void> {
    const upstreams = await this.replicas(label)
    if (!Array.isArray(upstreams)) {
      res.setHeader('retry-after', '1')
      return sendPage(req, res, upstreams.status, 'Service unavailable', upstreams.message, upstreams.reason)
    }
    this.forward(req, res, upstreams, label)
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Node takes its own error listener off an upgraded socket: a client's reset while the gateway answers or
    // looks up replicas would otherwise be an uncaught error.
    socket.on('error', () => socket.destroy())
    // Never idle from now on: an upgrade is answered, or tunnelled until one side ends.
    const held = this.heldOf(socket)
    if (held) held.tunnel = true
    const refusal = webPageRefusal(req, this.policy)
    if (refusal)
      return void socket.end(
        `HTTP/1.1 ${refusal.status} Refused\r\n${GATEWAY_ANSWER_HEADER}: refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      )
    const api = this.apiFor(req)
    if (api) return api.upgrade(req, socket, head)
    const deployment = this.label(req, DEPLOYMENT_DOMAIN)
    if (deployment !== null)
      return void this.upgradeDeployment(req, socket, head, deployment).catch(() => socket.destroy())
    const {job, hostPort} = this.target(req)
    if (hostPort === null) {
      socket.end(
        `HTTP/1.1 404 Not Found\r\n${GATEWAY_ANSWER_HEADER}: not-ready\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      )
      return
    }
    this.tunnel(req, socket as Socket, head, [{job, hostPort}])
  }

  private async upgradeDeployment(req: IncomingMessage, socket: Duplex, head: Buffer, label: string): Promise<void> {
    const upstreams = await this.replicas(label)
    if (!Array.isArray(upstreams)) {
      const status = upstreams.status === 404 ? '404 Not Found' : '503 Service Unavailable'
      return void socket.end(
        `HTTP/1.1 ${status}\r\n${GATEWAY_ANSWER_HEADER}: ${upstreams.reason}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      )
    }
    this.tunnel(req, socket as Socket, head, upstreams)
  }

  /**
   * Connects the upgraded connection to the first upstream that takes it (the next when one fails to connect).
   * Until the head of the service's answer has come (within the answer timeout, or a 502), it is read and passed on
   * without the gateway's own header; then bytes flow both ways, with no idle bound while both sides are open. Once
   * either side ends its half, the other is ended too, and both are closed after the half-closed bound of quiet;
   * the job's end resets both.
   */
  private tunnel(req: IncomingMessage, socket: Socket, head: Buffer, upstreams: Upstream[]): void {
    const [target, ...others] = upstreams as [Upstream, ...Upstream[]]
    let connected = false
    /** The head of the service's answer, while it comes; null once it is passed on. */
    let answerHead: Buffer | null = Buffer.alloc(0)
    const upstream = connect(target.hostPort, '127.0.0.1', () => {
      connected = true
      clearTimeout(timer)
      // The request goes on as it came (its Upgrade headers included); from then on bytes flow both ways.
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`]
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`)
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`)
      if (head.length > 0) upstream.write(head)
      upstream.setTimeout(this.answerTimeoutMs)
      upstream.on('data', onHead)
      socket.pipe(upstream)
    })
    /** Resets the service's side: given up, it is told so (a FIN leaves a service that ignores it half-open). */
    const reset = () => {
      if (upstream.connecting || upstream.destroyed) upstream.destroy()
      else upstream.resetAndDestroy()
    }
    const unlink = enter(this.open, target.job, {
      hostPort: target.hostPort,
      abandon: () => {
        // The job is gone: both sides reset, whatever they still send.
        reset()
        if (!socket.destroyed) socket.resetAndDestroy()
      },
    })
    const timer = setTimeout(
      () => upstream.destroy(Object.assign(new Error('no connection within the connect timeout'), {code: 'ETIMEDOUT'})),
      this.connectTimeoutMs,
    )
    const answer502 = (message: string, reason: Reason) => {
      reset()
      if (socket.destroyed) return
      const body = `${JSON.stringify({error: 'bad_gateway', message})}\n`
      socket.end(
        `HTTP/1.1 502 Bad Gateway\r\n${GATEWAY_ANSWER_HEADER}: ${reason}\r\ncontent-type: application/json\r\n` +
          `connection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      )
      socket.setTimeout(this.halfClosedMs, () => socket.destroy())
    }
    const onHead = (chunk: Buffer) => {
      answerHead = Buffer.concat([answerHead!, chunk])
      const end = answerHead.indexOf('\r\n\r\n')
      if (end < 0) {
        if (answerHead.length > MAX_UPGRADE_ANSWER_HEAD)
          answer502("The job service's answer to the upgrade has headers too large.", 'invalid-answer')
        return
      }
      upstream.off('data', onHead)
      const lines = answerHead.subarray(0, end).toString('latin1').split('\r\n')
      // Bytes pass on as they come from here on, so the head is checked as a plain answer's is: no status outside
      // 100-599, no malformed line, reaches the client.
      const problem = invalidUpgradeHead(lines)
      if (problem !== null) {
        answerHead = null
        return answer502(`The job service's answer to the upgrade cannot be passed on: ${problem}.`, 'invalid-answer')
      }
      // Only the gateway's own answers carry its header: a service's would pass its answer off as the gateway's.
      const kept = lines.filter((line) => line.split(':', 1)[0]!.trim().toLowerCase() !== GATEWAY_ANSWER_HEADER)
      const rest = answerHead.subarray(end + 4)
      answerHead = null
      upstream.setTimeout(0)
      socket.write(Buffer.from(`${kept.join('\r\n')}\r\n\r\n`, 'latin1'))
      if (rest.length > 0) socket.write(rest)
      upstream.pipe(socket)
    }
    const halfClosed = () => {
      socket.setTimeout(this.halfClosedMs)
      upstream.setTimeout(this.halfClosedMs)
    }
    const drop = () => {
      clearTimeout(timer)
      reset()
      socket.destroy()
    }
    const onSocketError = () => drop()
    const onSocketClose = () => upstream.destroy()
    const onSocketEnd = () => halfClosed()
    const onSocketTimeout = () => drop()
    upstream.on('timeout', () => {
      if (answerHead !== null && answerHead.length === 0 && !socket.writableEnded)
        return answer502('The job service did not answer the upgrade.', 'unreachable')
      drop()
    })
    upstream.on('end', () => {
      if (answerHead !== null) return answer502('The job service closed before answering the upgrade.', 'unreachable')
      halfClosed()
    })
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      if (!connected && others.length > 0 && GONE.has(error.code ?? '') && !socket.destroyed) {
        socket.off('error', onSocketError)
        socket.off('close', onSocketClose)
        socket.off('end', onSocketEnd)
        socket.off('timeout', onSocketTimeout)
        return this.tunnel(req, socket, head, others)
      }
      drop()
    })
    socket.on('error', onSocketError)
    socket.on('end', onSocketEnd)
    socket.on('timeout', onSocketTimeout)
    upstream.on('close', () => {
      clearTimeout(timer)
      unlink()
      if (socket.destroyed || (!connected && others.length > 0)) return
      // What the service sent is flushed to the client, then the connection goes (its half is of no use now).
      if (!socket.writableEnded) socket.end()
      socket.setTimeout(this.halfClosedMs)
      if (socket.writableFinished) socket.destroy()
      else socket.once('finish', () => socket.destroy())
    })
    socket.on('close', onSocketClose)
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

/** A service's raw headers without the gateway's own header: only the gateway's answers carry it. */
function withoutGatewayHeader(raw: string[]): string[] {
  const kept: string[] = []
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.toLowerCase() !== GATEWAY_ANSWER_HEADER) kept.push(raw[i]!, raw[i + 1] ?? '')
  return kept
}

/**
 * Why a service's answer cannot be passed on, or null when it can: a final status outside 200-599 (Node's client
 * hands on 000-099, 101 to a request that asked for no upgrade and 600-999, and writeHead throws below 100), or a
 * header name or value Node would refuse to send.
 */
function invalidAnswer(answer: IncomingMessage): string | null {
  const status = answer.statusCode ?? 0
  if (!Number.isInteger(status) || status < 200 || status > 599) return `status ${status}`
  const headers = answer.rawHeaders
  for (let i = 0; i < headers.length; i += 2)
    if (unsendable(headers[i]!, headers[i + 1] ?? ''))
      return `a header that cannot be sent on: ${JSON.stringify(headers[i]!.slice(0, 100))}`
  return null
}

/** True when Node would refuse to send a header of this name and value. */
function unsendable(name: string, value: string): boolean {
  try {
    validateHeaderName(name)
    validateHeaderValue(name, value)
    return false
  } catch {
    return true
  }
}

/** Why the head of a service's answer to an upgrade (its lines) cannot be passed on, or null when it can. */
function invalidUpgradeHead(lines: string[]): string | null {
  // eslint-disable-next-line no-control-regex -- a reason phrase with a control byte is what is refused
  const status = /^HTTP\/1\.[01] (\d{3})(?: [^\x00-\x08\x0a-\x1f\x7f]*)?$/.exec(lines[0] ?? '')
  if (!status) return 'a malformed status line'
  const code = Number(status[1])
  if (code < 100 || code > 599) return `status ${code}`
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon < 0 || unsendable(line.slice(0, colon), line.slice(colon + 1).trim()))
      return `a header that cannot be sent on: ${JSON.stringify(line.slice(0, 100))}`
  }
  return null
}

/**
 * Runs a listener's work so that nothing it throws leaves the listener: one request's failure ends its own
 * connection, never the process (the localnet's chain, faucet, nodes and gateway share it).
 */
function guard(work: () => void, connection: ServerResponse | Duplex): void {
  try {
    work()
  } catch {
    connection.destroy()
  }
}

/** True when the request carries a body (a length above 0, or chunks). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

function notFound(req: IncomingMessage, res: ServerResponse, job: string | null): void {
  const message = job
    ? `No service of job ${job} is ready here: it is starting (its health checks have not passed yet) or has ended.`
    : `This is the gpunet node gateway: job services answer at http://<job>.${GATEWAY_DOMAIN}:<port>/.`
  sendPage(req, res, 404, 'Page not found', message, job ? 'not-ready' : 'no-service')
}

/** An HTML page for browsers, JSON for everyone else. */
function sendPage(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  title: string,
  message: string,
  reason: Reason,
): void {
  req.resume()
  // A body still coming (sent a byte at a time, say) is not waited for: the connection goes with the page.
  if (!req.complete) res.shouldKeepAlive = false
  if ((req.headers.accept ?? '').includes('text/html')) {
    const escaped = message.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)
    res.writeHead(status, {'content-type': 'text/html; charset=utf-8', [GATEWAY_ANSWER_HEADER]: reason})
    res.end(`<!doctype html><title>${title}</title><h1>${title}</h1><p>${escaped}</p>\n`)
    return
  }
  res.writeHead(status, {'content-type': 'application/json', [GATEWAY_ANSWER_HEADER]: reason})
  const errors: Record<number, string> = {404: 'not_found', 502: 'bad_gateway', 503: 'unavailable'}
  const error = errors[status] ?? 'refused'
  res.end(`${JSON.stringify({error, message})}\n`)
}
