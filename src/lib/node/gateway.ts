/**
 * The node gateway: serves each job's first exposed port at `http://<job>.node.localhost:<port>/`, and every
 * exposed port P also at `http://<job>-P.node.localhost:<port>/`, routing on the Host header and proxying HTTP
 * requests and websocket upgrades to the port the container publishes on 127.0.0.1. A job whose service is not
 * ready (or gone) answers a page-not-found page. The node's own API answers at `http://<node>.node.localhost:<port>/`.
 */
import {once} from 'node:events'
import {createServer, type IncomingMessage, request, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {connect} from 'node:net'
import type {Duplex} from 'node:stream'

import {type LoopbackPolicy, webPageRefusal} from '../http/loopback-guard.js'
import {portLabel} from '../market/service-url.js'
import type {NodeApi} from './api/server.js'

/**
 * The header on every answer the gateway gives itself (never on a job service's), naming why: `not-ready`,
 * `no-service`, `unreachable` or `refused`. A client waiting for a service counts any other answer as the service's,
 * even its 404.
 */
export const GATEWAY_ANSWER_HEADER = 'x-gpunet-gateway'

/** Default gateway port: clear of the localnet's JSON-RPC and WebSocket pair (28899, 28900). */
export const DEFAULT_GATEWAY_PORT = 28980

/** The host name suffix of job services; browsers resolve `*.localhost` to the loopback address. */
export const GATEWAY_DOMAIN = 'node.localhost'

/** Connections the gateway holds at once; more are closed as they come (docs/localnet.md). */
export const MAX_GATEWAY_CONNECTIONS = 512

/** A connection must send a request's headers within this (Node's default is 60 s): idle ones hold a slot. */
export const GATEWAY_HEADERS_TIMEOUT_MS = 10_000

/** The gateway serves its own name and every job's; a job's page is same-origin with itself only. */
const POLICY: LoopbackPolicy = {
  servesName: (name) => name === GATEWAY_DOMAIN || name.endsWith(`.${GATEWAY_DOMAIN}`),
}

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

  constructor(options: {headersTimeoutMs?: number} = {}) {
    const headersTimeout = options.headersTimeoutMs ?? GATEWAY_HEADERS_TIMEOUT_MS
    this.server = createServer(
      // Checked often enough that an idle connection goes soon after its deadline.
      {headersTimeout, connectionsCheckingInterval: Math.min(1000, headersTimeout)},
      (req, res) => this.serve(req, res),
    )
    this.server.maxConnections = MAX_GATEWAY_CONNECTIONS
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head))
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

  /** Takes down the given ports of a job (an operation that ended); the job's URL moves to a port still served. */
  withdraw(job: string, ports: readonly number[]): void {
    const route = this.routes.get(job.toLowerCase())
    if (!route) return
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

  /** Takes the job's service down. */
  remove(job: string): void {
    this.routes.delete(job.toLowerCase())
  }

  /** Stops serving and drops open connections. */
  async close(): Promise<void> {
    for (const api of this.nodeApis.values()) api.close()
    this.server.closeAllConnections()
    await new Promise((resolve) => this.server.close(resolve))
  }

  /** The host name's label before `.node.localhost`, lowercased; null for any other host. */
  private label(req: IncomingMessage): string | null {
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '')
    return host.endsWith(`.${GATEWAY_DOMAIN}`) ? host.slice(0, -GATEWAY_DOMAIN.length - 1) : null
  }

  private apiFor(req: IncomingMessage): NodeApi | null {
    const label = this.label(req)
    return label === null ? null : (this.nodeApis.get(label) ?? null)
  }

  private target(req: IncomingMessage): {job: string | null; hostPort: number | null} {
    const label = this.label(req)
    if (label === null) return {job: null, hostPort: null}
    const [, job = label, port] = /^(.*)-(\d+)$/.exec(label) ?? []
    const route = this.routes.get(job)
    const hostPort = route?.ports.get(port === undefined ? route.primary : Number(port))
    return {job: label, hostPort: hostPort ?? null}
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const refusal = webPageRefusal(req, POLICY)
    if (refusal) return sendPage(req, res, refusal.status, 'Refused', refusal.message, 'refused')
    const api = this.apiFor(req)
    if (api) return api.serve(req, res)
    const {job, hostPort} = this.target(req)
    if (hostPort === null) return notFound(req, res, job)
    const upstream = request(
      {host: '127.0.0.1', port: hostPort, method: req.method, path: req.url, headers: req.headers},
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => {
      if (res.headersSent) return void res.destroy()
      sendPage(req, res, 502, 'Bad gateway', 'The job service did not answer.', 'unreachable')
    })
    req.pipe(upstream)
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const refusal = webPageRefusal(req, POLICY)
    if (refusal)
      return void socket.end(
        `HTTP/1.1 ${refusal.status} Refused\r\n${GATEWAY_ANSWER_HEADER}: refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      )
    const api = this.apiFor(req)
    if (api) return api.upgrade(req, socket, head)
    const {hostPort} = this.target(req)
    if (hostPort === null) {
      socket.end(
        `HTTP/1.1 404 Not Found\r\n${GATEWAY_ANSWER_HEADER}: not-ready\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      )
      return
    }
    const upstream = connect(hostPort, '127.0.0.1', () => {
      // The request goes on as it came (its Upgrade headers included); from then on bytes flow both ways.
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`]
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`)
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`)
      if (head.length > 0) upstream.write(head)
      upstream.pipe(socket).pipe(upstream)
    })
    const drop = () => {
      upstream.destroy()
      socket.destroy()
    }
    upstream.on('error', drop)
    socket.on('error', drop)
    upstream.on('close', () => socket.destroy())
    socket.on('close', () => upstream.destroy())
  }
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
  reason: 'not-ready' | 'no-service' | 'unreachable' | 'refused',
): void {
  req.resume()
  if ((req.headers.accept ?? '').includes('text/html')) {
    const escaped = message.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)
    res.writeHead(status, {'content-type': 'text/html; charset=utf-8', [GATEWAY_ANSWER_HEADER]: reason})
    res.end(`<!doctype html><title>${title}</title><h1>${title}</h1><p>${escaped}</p>\n`)
    return
  }
  res.writeHead(status, {'content-type': 'application/json', [GATEWAY_ANSWER_HEADER]: reason})
  const error = status === 404 ? 'not_found' : status === 502 ? 'bad_gateway' : 'refused'
  res.end(`${JSON.stringify({error, message})}\n`)
}
