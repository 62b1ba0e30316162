/**
 * The node gateway: serves each job's first exposed port at `http://<job>.node.localhost:<port>/`, and every
 * exposed port P also at `http://<job>-P.node.localhost:<port>/`, routing on the Host header and proxying HTTP
 * requests and websocket upgrades to the port the container publishes on 127.0.0.1. A job whose service is not
 * ready (or gone) answers a page-not-found page. Each node's own API answers at `http://<node>.node.localhost:<port>/`
 * (the localnet's nodes share one gateway). A deployment's stable URL, `http://<deployment>.deploy.localhost:<port>/`
 * (stable-url.ts), is spread over its ready replicas that are not draining; none ready is a 503. With a certificate,
 * it serves all of it over https too, on a port of its own (https.ts).
 *
 * Here: the server and its bounds, and the dispatch of each request to what its host names (a node's API, a
 * deployment's replicas, a job's port). The routing table of jobs' ports (job-routes.ts), the replicas of stable URLs
 * (replicas.ts), the proxying of a request (proxy.ts), the tunnels of upgrades (tunnel.ts), the checks of a
 * service's answer (answer-checks.ts) and the answers the gateway gives itself (pages.ts) have files of their own,
 * behind this one class: its importers see only it.
 */
import {once} from 'node:events'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'
import type {Duplex} from 'node:stream'

import {type LoopbackPolicy, webPageRefusal} from '../http/loopback-guard.js'
import {portLabel} from '../market/service-url.js'
import type {NodeApi} from '../node/api-server/server.js'
import type {NetworkName} from '../node/network-names.js'
import {GATEWAY_DOMAIN, hostLabel, JobRoutes, splitLabel, type Upstream} from './job-routes.js'
import {type NetworkNameOptions, NetworkNames} from './network-names.js'
import type {ProxyCloseReason, ProxyEventSource} from './proxy-events.js'
import {FRPS_NOT_FOUND_UPGRADE, frpsNotFound, notFound, sendPage, upgradeAnswer} from './pages.js'
import {checkHoldBounds, type HoldBounds, Holding} from './holding.js'
import {HttpProxy} from './proxy.js'
import {type NoReplica, Replicas} from './replicas.js'
import {CONNECT_TIMEOUT_MS, DEPLOYMENT_DOMAIN, type DeploymentRoutes, EJECTION_MS} from './stable-url.js'
import {Tunnels} from './tunnel.js'
import {GATEWAY_HANDSHAKE_TIMEOUT_MS, type GatewayTls, HttpsSide} from './https.js'

export {GATEWAY_HANDSHAKE_TIMEOUT_MS, type GatewayTls}

/** Default gateway port: clear of the localnet's JSON-RPC and WebSocket pair (28899, 28900). */
export const DEFAULT_GATEWAY_PORT = 28980

/** The host name suffix of job services; browsers resolve `*.localhost` to the loopback address. */
export {GATEWAY_DOMAIN}

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

/** The gateway serves its own name, every job's and every deployment's; a page is same-origin with itself only. */
const POLICY: LoopbackPolicy = {
  servesName: (name) =>
    name === GATEWAY_DOMAIN || name.endsWith(`.${GATEWAY_DOMAIN}`) || name.endsWith(`.${DEPLOYMENT_DOMAIN}`),
}

/** One client connection of a source: how many of its requests are being answered, and whether it is a tunnel. */
interface Held {
  busy: number
  tunnel: boolean
}

/** Serves exposed ports of the jobs the node runs. */
export class Gateway {
  private readonly routes = new JobRoutes()
  /** The network's own names of the jobs' ports (expose-id hashes, deployment domains): network-names.ts. */
  private readonly names: NetworkNames
  private readonly server: Server
  private port = 0
  /** Each node's API by its lowercased address: a localnet's nodes share one gateway. */
  private readonly nodeApis = new Map<string, NodeApi>()
  private readonly replicas: Replicas
  /** Requests held while a deployment starts from zero (holding.ts). */
  private readonly holding: Holding
  private deployments: DeploymentRoutes | null = null
  private readonly proxy: HttpProxy
  private readonly tunnels: Tunnels
  /** Client connections by source address, oldest first. */
  private readonly held = new Map<string, Map<Socket, Held>>()
  private readonly maxPerSource: number
  private readonly policy: LoopbackPolicy
  private readonly handshakeTimeoutMs: number
  private https: HttpsSide | null = null
  /** The TCP connection under each https connection: what the source's cap counted. */
  private readonly transports = new WeakMap<Duplex, Socket>()

  constructor(
    options: {
      headersTimeoutMs?: number
      connectTimeoutMs?: number
      ejectionMs?: number
      answerTimeoutMs?: number
      tunnelHalfClosedMs?: number
      maxConnectionsPerSource?: number
      /** How long an https connection's TLS handshake may take (GATEWAY_HANDSHAKE_TIMEOUT_MS). */
      handshakeTimeoutMs?: number
      /** Browser origins allowed besides a page's own (the allowOrigin setting). */
      allowedOrigins?: readonly string[]
      /** The load-balancer groups' health checks (their interval: 10 s; shorter in tests). */
      networkNames?: NetworkNameOptions
      /** How many requests wait per deployment starting from zero, and how long each (holding.ts's defaults). */
      hold?: Partial<HoldBounds>
    } = {},
  ) {
    this.policy = {...POLICY, allowedOrigins: options.allowedOrigins}
    const headersTimeout = options.headersTimeoutMs ?? GATEWAY_HEADERS_TIMEOUT_MS
    const connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS
    const answerTimeoutMs = options.answerTimeoutMs ?? GATEWAY_ANSWER_TIMEOUT_MS
    const halfClosedMs = options.tunnelHalfClosedMs ?? GATEWAY_TUNNEL_HALF_CLOSED_MS
    this.maxPerSource = options.maxConnectionsPerSource ?? MAX_GATEWAY_CONNECTIONS_PER_SOURCE
    this.names = new NetworkNames(this.routes, options.networkNames)
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? GATEWAY_HANDSHAKE_TIMEOUT_MS
    this.replicas = new Replicas(this.routes, options.ejectionMs ?? EJECTION_MS, () => this.port)
    this.holding = new Holding(checkHoldBounds(options.hold))
    this.proxy = new HttpProxy(this.routes, this.replicas, {connectTimeoutMs, answerTimeoutMs})
    this.tunnels = new Tunnels(this.routes, this.replicas, {connectTimeoutMs, answerTimeoutMs, halfClosedMs})
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
    // An https connection was counted as its TCP connection came, before its handshake.
    this.server.on('connection', (socket: Socket) => this.transports.has(socket) || this.admit(socket))
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
    const net = this.transports.get(socket) ?? (socket as Socket)
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

  /**
   * Serves everything over https too, on 127.0.0.1:`port` (0 picks a free one), with `tls`'s certificate; returns
   * its base URL, `https://node.localhost:<port>`. Each connection counts against its source's cap from its first
   * byte, and is closed when its handshake takes longer than the handshake bound.
   */
  async listenHttps(port: number, tls: GatewayTls): Promise<string> {
    const https = new HttpsSide(tls, {
      handshakeTimeoutMs: this.handshakeTimeoutMs,
      maxConnections: MAX_GATEWAY_CONNECTIONS,
      admit: (socket) => this.admit(socket),
      secure: (socket, transport) => {
        this.transports.set(socket, transport)
        this.server.emit('connection', socket)
      },
    })
    await https.listen(port)
    this.https = https
    return this.httpsUrl!
  }

  /** The https base URL, `https://node.localhost:<port>`; null when the gateway serves http only. */
  get httpsUrl(): string | null {
    return this.https && `https://${GATEWAY_DOMAIN}:${this.https.listeningPort}`
  }

  /** Serves new https connections with a renewed certificate. */
  renewCertificate(tls: GatewayTls): void {
    this.https?.renew(tls)
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
    this.replicas.use(routes)
  }

  /** Requests through a stable URL in flight to the job now, open tunnels included (a drain waits for none). */
  inFlight(job: string): number {
    return this.replicas.inFlight(job)
  }

  /**
   * A deployment's traffic through its stable URLs now (`deployment` lowercased, as host names are): requests in
   * flight to its replicas (open tunnels included), and requests held while it starts from zero.
   */
  traffic(deployment: string): {inFlight: number; held: number} {
    return {inFlight: this.replicas.deploymentInFlight(deployment), held: this.holding.heldFor(deployment)}
  }

  /** Its requests through a stable URL in flight per job (lowercased) now, jobs with none left out. */
  jobsInFlight(): Record<string, number> {
    return this.replicas.jobsInFlight()
  }

  /** The traffic of every deployment (lowercased) with a request in flight or held now. */
  busy(): {deployment: string; inFlight: number; held: number}[] {
    const deployments = new Set([...this.replicas.deploymentsInFlight(), ...this.holding.deployments()])
    return [...deployments].map((deployment) => ({deployment, ...this.traffic(deployment)}))
  }

  /** Calls `listener` with a deployment (lowercased) as soon as a request is held for it; answers the stop. */
  onHeld(listener: (deployment: string) => void): () => void {
    return this.holding.onHeld(listener)
  }

  /** The container port served at the job's own URL; null when it serves none. */
  primaryPort(job: string): number | null {
    return this.routes.primaryPort(job)
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
    this.routes.register(job, ports)
  }

  /**
   * Takes down the given ports of a job (an operation that ended); the job's URL moves to a port still served.
   * Requests sent to those ports and not answered yet never will be: they are given up (sent to another replica
   * when they may be).
   */
  withdraw(job: string, ports: readonly number[]): void {
    this.routes.withdraw(job, ports)
    this.names.withdraw(job, ports)
  }

  /** Serves the job's ports also under the network's names: expose-id hashes and deployment domains. */
  serveNames(job: string, names: readonly NetworkName[]): void {
    this.names.serve(job, names)
  }

  /** Sends the traffic of the job's exposed `port` to `hostPort` on 127.0.0.1 from now on. */
  ready(job: string, port: number, hostPort: number): void {
    this.routes.ready(job, port, hostPort)
    this.names.ready(job, port)
  }

  /**
   * Takes the job's service down; the requests sent to it and not answered yet are given up. Its deployment proxies
   * unregister for `reason`: `graceful` (the job ended), `lost` (its node is going away with the job running).
   */
  remove(job: string, reason: ProxyCloseReason = 'graceful'): void {
    this.routes.remove(job)
    this.names.remove(job, reason)
  }

  /** The deployment proxies' lifecycle events, as the network's FRP server streams them (proxy-events.ts). */
  get proxyEvents(): ProxyEventSource {
    return this.names.events
  }

  /** Stops serving and drops open connections, tunnels included (Node's closeAllConnections leaves those). */
  async close(): Promise<void> {
    for (const api of this.nodeApis.values()) api.close()
    this.names.close()
    this.server.closeAllConnections()
    for (const mine of this.held.values()) for (const socket of mine.keys()) socket.destroy()
    await Promise.all([new Promise((resolve) => this.server.close(resolve)), this.https?.close()])
  }

  private apiFor(req: IncomingMessage): NodeApi | null {
    const label = hostLabel(req)
    return label === null ? null : (this.nodeApis.get(label) ?? null)
  }

  /** The host's label, the job it names (without its `-P`) and the host port serving it, when one does. */
  private target(req: IncomingMessage): {label: string | null; job: string; hostPort: number | null} {
    const label = hostLabel(req)
    if (label === null) return {label: null, job: '', hostPort: null}
    const {name: job, port} = splitLabel(label)
    return {label, job, hostPort: this.routes.hostPort(job, port)}
  }

  /** What the host names among the network's names (network-names.ts), or null for none of them. */
  private named(req: IncomingMessage) {
    const label = hostLabel(req)
    return label === null ? null : this.names.target(label)
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
    const deployment = hostLabel(req, DEPLOYMENT_DOMAIN)
    if (deployment !== null) return void this.serveDeployment(req, res, deployment).catch(() => res.destroy())
    const named = this.named(req)
    if (named) return 'empty' in named ? frpsNotFound(req, res) : this.proxy.forward(req, res, [named.upstream], null)
    const {label, job, hostPort} = this.target(req)
    if (hostPort === null) return notFound(req, res, label)
    this.proxy.forward(req, res, [{job, hostPort}], null)
  }

  private async serveDeployment(req: IncomingMessage, res: ServerResponse, label: string): Promise<void> {
    const upstreams = await whileOpen(res, (gone) => this.upstreamsOf(label, gone))
    if (res.destroyed) return
    if (!Array.isArray(upstreams)) {
      res.setHeader('retry-after', String(upstreams.retryAfter ?? 1))
      return sendPage(req, res, upstreams.status, 'Service unavailable', upstreams.message, upstreams.reason)
    }
    this.proxy.forward(req, res, upstreams, label)
  }

  /**
   * The upstreams of a stable URL: its replicas ready now, or, none being ready and the deployment's policy
   * scaling it to zero, those that become ready while the request is held (until `gone`: the client left).
   */
  private async upstreamsOf(label: string, gone: Promise<unknown>): Promise<Upstream[] | NoReplica> {
    const found = await this.replicas.of(label)
    if (Array.isArray(found) || found.reason !== 'no-replica' || !this.deployments?.holdsAtZero) return found
    const {name} = splitLabel(label)
    if (!(await this.deployments.holdsAtZero(name).catch(() => false))) return found
    return this.holding.hold(name, () => this.replicas.of(label), gone)
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Node takes its own error listener off an upgraded socket: a client's reset while the gateway answers or
    // looks up replicas would otherwise be an uncaught error.
    socket.on('error', () => socket.destroy())
    // Never idle from now on: an upgrade is answered, or tunnelled until one side ends.
    const held = this.heldOf(socket)
    if (held) held.tunnel = true
    const refusal = webPageRefusal(req, this.policy)
    if (refusal) return void socket.end(upgradeAnswer(`${refusal.status} Refused`, 'refused'))
    const api = this.apiFor(req)
    if (api) return api.upgrade(req, socket, head)
    const deployment = hostLabel(req, DEPLOYMENT_DOMAIN)
    if (deployment !== null)
      return void this.upgradeDeployment(req, socket, head, deployment).catch(() => socket.destroy())
    const named = this.named(req)
    if (named && 'empty' in named) return void socket.end(FRPS_NOT_FOUND_UPGRADE)
    if (named) return this.tunnels.tunnel(req, socket as Socket, head, [named.upstream])
    const {job, hostPort} = this.target(req)
    if (hostPort === null) return void socket.end(upgradeAnswer('404 Not Found', 'not-ready'))
    this.tunnels.tunnel(req, socket as Socket, head, [{job, hostPort}])
  }

  private async upgradeDeployment(req: IncomingMessage, socket: Duplex, head: Buffer, label: string): Promise<void> {
    const upstreams = await whileOpen(socket, (gone) => this.upstreamsOf(label, gone))
    if (socket.destroyed) return
    if (!Array.isArray(upstreams)) {
      const status = upstreams.status === 404 ? '404 Not Found' : '503 Service Unavailable'
      return void socket.end(upgradeAnswer(status, upstreams.reason))
    }
    this.tunnels.tunnel(req, socket as Socket, head, upstreams, label)
  }
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

/**
 * Runs `work` with a promise that resolves should the connection close meanwhile (never rejects: a client's reset
 * is its close too), and takes its listener off once the work is done. Kept on, it would stay for the whole answer:
 * with the gateway's own (busy, in flight, routes) and the 7 `pipeline(answer, res)` adds on Node 20, a response
 * passed 10 close listeners, and every answer through a stable URL printed a MaxListenersExceededWarning.
 */
async function whileOpen<T>(
  connection: ServerResponse | Duplex,
  work: (gone: Promise<void>) => Promise<T>,
): Promise<T> {
  let onClose = () => {}
  const gone = new Promise<void>((resolve) => (onClose = resolve))
  connection.once('close', onClose)
  try {
    return await work(gone)
  } finally {
    connection.off('close', onClose)
  }
}
