/**
 * The node API the localnet's node serves at `http://<node>.node.localhost:<gateway_port>/`, as the network's nodes
 * serve theirs (reference/network-job-plane.md §4): one WebSocket with `/flog`, `/log` and `/status`, history first
 * and then live; `GET /job/<job>/info` (server-sent events), `/endpoints`, `/results`; `POST /job/<job>/stop`.
 * Every path checks the poster's signature, `/flog` included (the network's node checks none there), and
 * everything is bounded: history (feed.ts), followers per job, subscriptions per socket, request and frame sizes.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'
import type {Duplex} from 'node:stream'

import bs58 from 'bs58'
import {type RawData, type WebSocket, WebSocketServer} from 'ws'

import {requestHeaders, singleHeader} from '../../http/request-headers.js'
import {hasBase58Shape} from '../../text/base58-text.js'
import {
  checkHeader,
  CLOSE,
  encodeFrame,
  type FramePath,
  type HeaderScope,
  type NodeApiRoute,
  parseHeader,
  SOCKET_HEADER_EXPIRY_S,
  SOCKET_PATHS,
  type SocketPath,
  type StatusEntry,
} from '../../node-api/protocol.js'
import {EXEC_PATH} from '../../node-api/exec-protocol.js'
import {checkTerminalGrant, TERMINAL_PATH} from '../../node-api/terminal-protocol.js'
import type {ControlAction, ControlTarget, ControlVerdict, Endpoint, OperationAccess} from './access.js'
import {EXEC_STALL_MS, openExec} from './exec.js'
import type {FeedEntry, FeedRegistry, Follower, JobFeed} from './feed.js'
import {answerStats, statsQuery, streamStats} from './stats.js'

/** Largest message a client may send on the socket. */
export const MAX_REQUEST_FRAME_BYTES = 64 * 1024
/** Subscriptions one socket may hold. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 8
/** Bytes waiting to be sent to one socket; a follower further behind is dropped (close 1013) and may reconnect. */
export const MAX_SOCKET_BACKLOG = 8 * 1024 * 1024
/** The network's nodes ping every 30 s. */
const PING_MS = 30_000
/**
 * API sockets open at once, and from one client address: well below the gateway's 512 connections, so sockets
 * that send nothing can never take the connections the jobs' services are reached through.
 */
export const MAX_API_SOCKETS = 128
export const MAX_API_SOCKETS_PER_ADDRESS = 32
/** A socket that has sent no request this long after it opened is closed (1008). */
export const FIRST_MESSAGE_MS = 10_000

/** What the API needs of its node. */
export interface NodeApiHost {
  /** The node's address (base58). */
  readonly address: string
  readonly feeds: FeedRegistry
  /** The job's poster and timeout, from the chain; null when there is no job at that address. */
  jobTerms(job: string): Promise<{poster: Uint8Array; timeoutSeconds: number} | null>
  /** The job's exposed ports while it runs here, keyed by their service id. */
  endpoints(job: string): Record<string, Endpoint> | null
  /** Stops the job the node runs, keeping its result (recorded with `finish`); false when it runs no such job. */
  stop(job: string): boolean
  /** Restarts or stops an operation or group of the job it runs; null when it runs no such job. */
  control(job: string, target: ControlTarget, action: ControlAction): ControlVerdict | null
  /** The job's operations running here now, by id (for `/exec` and `/stats`); null when it runs no such job. */
  operations?(job: string): ReadonlyMap<string, OperationAccess> | null
}

/** Serves one node's API (mounted in the gateway, which routes `<node>.node.localhost` here). */
export class NodeApi {
  private readonly wss = new WebSocketServer({noServer: true, maxPayload: MAX_REQUEST_FRAME_BYTES})
  /** Open API sockets (and upgrades under way) per client address. */
  private readonly sockets = new Map<string, number>()
  private socketCount = 0
  private readonly firstMessageMs: number
  private readonly execStallMs: number
  /** Unix ms: the clock headers and grants are checked against (a test moves it). */
  private readonly now: () => number

  constructor(
    private readonly host: NodeApiHost,
    options: {firstMessageMs?: number; execStallMs?: number; now?: () => number} = {},
  ) {
    this.firstMessageMs = options.firstMessageMs ?? FIRST_MESSAGE_MS
    this.execStallMs = options.execStallMs ?? EXEC_STALL_MS
    this.now = options.now ?? Date.now
    this.wss.on('connection', (socket) => this.connection(socket))
  }

  /** Answers one HTTP request. */
  serve(req: IncomingMessage, res: ServerResponse): void {
    void this.route(req, res).catch((error: Error) => {
      if (!res.headersSent) text(res, 500, `Error: ${error.message}`)
      else res.destroy()
    })
  }

  /**
   * Takes a WebSocket upgrade, or refuses it with 429 before the handshake when MAX_API_SOCKETS are open, or
   * MAX_API_SOCKETS_PER_ADDRESS from the client's address.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const address = req.socket.remoteAddress ?? ''
    const fromAddress = this.sockets.get(address) ?? 0
    if (this.socketCount >= MAX_API_SOCKETS || fromAddress >= MAX_API_SOCKETS_PER_ADDRESS) {
      socket.end('HTTP/1.1 429 Too Many Requests\r\nretry-after: 10\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
      return
    }
    this.sockets.set(address, fromAddress + 1)
    this.socketCount++
    let released = false
    socket.once('close', () => {
      if (released) return
      released = true
      this.socketCount--
      const left = (this.sockets.get(address) ?? 1) - 1
      if (left > 0) this.sockets.set(address, left)
      else this.sockets.delete(address)
    })
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req))
  }

  /** Closes every socket. */
  close(): void {
    for (const client of this.wss.clients) client.terminate()
    this.wss.close()
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.resume()
    const path = new URL(req.url ?? '/', 'http://node').pathname
    if (path === '/' && req.method === 'GET') return json(res, 200, this.host.address)
    const control = controlRoute(path)
    if (control) return this.control(req, res, control)
    const stats = /^\/job\/([1-9A-HJ-NP-Za-km-z]{32,44})\/stats(\/stream)?$/.exec(path)
    if (stats) return this.stats(req, res, stats[1]!, stats[2] !== undefined)
    const match = /^\/job\/([1-9A-HJ-NP-Za-km-z]{32,44})\/(info|endpoints|results|stop)$/.exec(path)
    if (!match) return text(res, 404, `No route for ${req.method} ${path}`)
    const [, job, action] = match as unknown as [string, string, string]
    if ((action === 'stop') !== (req.method === 'POST') || (action !== 'stop' && req.method !== 'GET'))
      return text(res, 405, `${req.method} is not allowed on ${path}`)
    // A malformed header is refused before the job is looked up: nothing untrusted is decoded before its shape.
    const header = authorization(req)
    if (typeof header !== 'string') return text(res, 401, `Unauthorized Request: ${header.reason}`)
    const terms = await this.host.jobTerms(job)
    if (!terms) return text(res, 400, `Could not find job with id ${job}`)
    const scope = this.scope(job, action as NodeApiRoute, terms, terms.timeoutSeconds)
    const verdict = checkHeader(header, scope)
    if (!verdict.ok) return text(res, 401, `Unauthorized Request: ${verdict.reason}`)
    const feed = this.host.feeds.get(job)
    if (action === 'stop') {
      return this.host.stop(job)
        ? text(res, 200, 'job stopped successfully')
        : text(res, 400, 'This node runs no such job now')
    }
    if (action === 'endpoints') {
      const urls = this.host.endpoints(job)
      if (!urls || Object.keys(urls).length === 0) return text(res, 400, 'No exposed url for job id')
      const online = Object.values(urls).some((u) => u.status === 'ONLINE')
      return json(res, 200, {urls, status: online ? 'ONLINE' : 'OFFLINE'})
    }
    if (!feed) return text(res, 404, 'Failed to find job for provided job id.')
    if (action === 'results') {
      if (!feed.result) return text(res, 400, 'cannot get job result at this time')
      return json(res, 200, feed.result)
    }
    this.info(req, res, feed)
  }

  /** `POST /job/<job>/operation/<op>/restart|stop` and `/group/<group>/…`: signed by the job's poster. */
  private async control(req: IncomingMessage, res: ServerResponse, route: ControlRoute): Promise<void> {
    if (req.method !== 'POST') return text(res, 405, `${req.method} is not allowed on ${route.path}`)
    const header = authorization(req)
    if (typeof header !== 'string') return text(res, 401, `Unauthorized Request: ${header.reason}`)
    const terms = await this.host.jobTerms(route.job)
    if (!terms) return text(res, 400, `Could not find job with id ${route.job}`)
    const scope = this.scope(route.job, `operation-${route.action}`, terms, terms.timeoutSeconds)
    const verdict = checkHeader(header, scope)
    if (!verdict.ok) return text(res, 401, `Unauthorized Request: ${verdict.reason}`)
    const answer = this.host.control(route.job, route.target, route.action)
    if (!answer) return text(res, 400, 'This node runs no such job now')
    if (!answer.ok) return text(res, answer.why === 'unknown' ? 404 : 409, answer.message)
    const done = route.action === 'stop' ? 'stopped' : 'restarted'
    return json(res, 200, {message: `Operation${answer.ops.length === 1 ? '' : 's'} ${done}`, ops: answer.ops})
  }

  /** `/job/<job>/stats` and its stream (stats.ts), read-signed as `/info`. */
  private async stats(req: IncomingMessage, res: ServerResponse, job: string, stream: boolean): Promise<void> {
    if (req.method !== 'GET') return text(res, 405, `${req.method} is not allowed here`)
    const header = authorization(req)
    if (typeof header !== 'string') return text(res, 401, `Unauthorized Request: ${header.reason}`)
    const query = statsQuery(new URL(req.url ?? '/', 'http://node'))
    if ('reason' in query) return text(res, 400, query.reason)
    const terms = await this.host.jobTerms(job)
    if (!terms) return text(res, 400, `Could not find job with id ${job}`)
    const verdict = checkHeader(header, this.scope(job, 'stats', terms, terms.timeoutSeconds))
    if (!verdict.ok) return text(res, 401, `Unauthorized Request: ${verdict.reason}`)
    const ops = () => this.host.operations?.(job) ?? null
    if (stream) return streamStats(req, res, ops, query.intervalS)
    await answerStats(res, ops)
  }

  /** `/job/<job>/info`: the job's state as server-sent events, one each time it changes, until it ends here. */
  private info(req: IncomingMessage, res: ServerResponse, feed: JobFeed): void {
    res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive'})
    let last = ''
    const send = () => {
      const info = infoObject(feed)
      const body = JSON.stringify(info)
      if (body !== last) res.write(`data: ${(last = body)}\n\n`)
      if (feed.ended) stop()
    }
    const unsubscribe = feed.onChange(send)
    const stop = () => {
      unsubscribe()
      res.end()
    }
    req.on('close', unsubscribe)
    send()
  }

  private connection(socket: WebSocket): void {
    const subscriptions: {feed: JobFeed; follower: Follower}[] = []
    // An `/exec` request takes the socket over: its later frames are the command's stdin and control.
    let exec: ((raw: RawData, binary: boolean) => void) | null = null
    const ping = setInterval(() => socket.ping(), PING_MS)
    // A socket must ask for something soon: an idle one only holds a connection.
    const deadline = setTimeout(
      () => socket.close(1008, `No request within ${this.firstMessageMs} ms`),
      this.firstMessageMs,
    )
    socket.on('message', (raw, binary) => {
      clearTimeout(deadline)
      if (exec) return exec(raw, binary)
      const request = subscriptions.length === 0 && !binary ? sessionRequest(raw) : null
      if (request) {
        const access = {
          authorize: (job: string, header: unknown) => this.authorizeExec(job, header),
          authorizeTerminal: (job: string, body: {message?: unknown; signature?: unknown; op?: unknown}) =>
            this.authorizeTerminal(job, body),
          operations: (job: string) => this.host.operations?.(job) ?? null,
          stallMs: this.execStallMs,
        }
        exec = openExec(socket, request, access, request.path === EXEC_PATH ? 'exec' : 'terminal')
        return
      }
      void this.subscribe(socket, raw, subscriptions).catch(() => socket.close(1011, 'Internal Server Error'))
    })
    socket.on('close', () => {
      clearTimeout(deadline)
      clearInterval(ping)
      for (const {feed, follower} of subscriptions) feed.unfollow(follower)
    })
    socket.on('error', () => socket.terminate())
  }

  private async subscribe(
    socket: WebSocket,
    raw: RawData,
    subscriptions: {feed: JobFeed; follower: Follower}[],
  ): Promise<void> {
    let request: {
      path?: unknown
      header?: unknown
      body?: {jobAddress?: unknown; opId?: unknown; group?: unknown; type?: unknown}
    }
    try {
      request = JSON.parse(raw.toString()) as typeof request
    } catch {
      return socket.close(CLOSE.INVALID_BODY, 'Expected a JSON request')
    }
    const path = request?.path
    if (typeof path !== 'string' || !(path in SOCKET_PATHS)) return socket.close(CLOSE.INVALID_PATH, 'Invalid Path')
    const job = request.body?.jobAddress
    if (typeof job !== 'string' || job === '')
      return socket.close(CLOSE.INVALID_BODY, 'Expected body to contain jobAddress.')
    // Shapes before any lookup: base58 decoding is quadratic, and the localnet is one process.
    if (!hasBase58Shape(job, 'key')) return socket.close(CLOSE.INVALID_BODY, 'Invalid job address')
    const parts = parseHeader(request.header)
    if ('reason' in parts) return socket.close(CLOSE.UNAUTHORIZED, `Unauthorized Request: ${parts.reason}`)
    const terms = await this.host.jobTerms(job)
    if (!terms) return socket.close(CLOSE.INVALID_BODY, `Could not find job with id ${job}`)
    const scope = this.scope(job, path as SocketPath, terms, SOCKET_HEADER_EXPIRY_S)
    let verdict = checkHeader(request.header, scope)
    // The node may follow its own job's state, as the network's nodes allow.
    if (!verdict.ok && path === '/status') {
      const own = checkHeader(request.header, {...scope, poster: nodeKey(this.host.address)})
      if (own.ok) verdict = own
    }
    if (!verdict.ok) return socket.close(CLOSE.UNAUTHORIZED, `Unauthorized Request: ${verdict.reason}`)
    if (subscriptions.length >= MAX_SUBSCRIPTIONS_PER_SOCKET)
      return socket.close(CLOSE.TRY_AGAIN, `At most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions per socket`)
    const feed = this.host.feeds.get(job)
    if (!feed) return socket.close(CLOSE.UNKNOWN_JOB, 'Invalid job address')
    const filter = {opId: request.body?.opId, group: request.body?.group, type: request.body?.type}
    const follower = socketFollower(socket, path as SocketPath, filter)
    if (!feed.follow(follower)) return socket.close(CLOSE.TRY_AGAIN, 'Too many followers of this job; try again')
    subscriptions.push({feed, follower})
  }

  /** Checks an `/exec` header: signed by the job's poster for the action `exec` (socket expiry for its time part). */
  private async authorizeExec(
    job: string,
    header: unknown,
  ): Promise<{ok: true} | {ok: false; code: number; reason: string}> {
    const parts = parseHeader(header)
    if ('reason' in parts) return {ok: false, code: CLOSE.UNAUTHORIZED, reason: `Unauthorized Request: ${parts.reason}`}
    const terms = await this.host.jobTerms(job)
    if (!terms) return {ok: false, code: CLOSE.INVALID_BODY, reason: `Could not find job with id ${job}`}
    const verdict = checkHeader(header, this.scope(job, '/exec', terms, SOCKET_HEADER_EXPIRY_S))
    return verdict.ok
      ? {ok: true}
      : {ok: false, code: CLOSE.UNAUTHORIZED, reason: `Unauthorized Request: ${verdict.reason}`}
  }

  /** Checks a `/terminal` grant: the network's text for this job and node on the localnet, signed by the poster. */
  private async authorizeTerminal(
    job: string,
    body: {message?: unknown; signature?: unknown; op?: unknown},
  ): Promise<{ok: true} | {ok: false; code: number; reason: string}> {
    if (typeof body.message !== 'string' || typeof body.signature !== 'string')
      return {ok: false, code: CLOSE.UNAUTHORIZED, reason: 'Unauthorized Request: no terminal grant'}
    const terms = await this.host.jobTerms(job)
    if (!terms) return {ok: false, code: CLOSE.INVALID_BODY, reason: `Could not find job with id ${job}`}
    const scope = {poster: terms.poster, job, node: this.host.address, network: 'localnet', nowMs: this.now()}
    const verdict = checkTerminalGrant(body as {message: string; signature: string; op?: unknown}, scope)
    return verdict.ok
      ? {ok: true}
      : {ok: false, code: CLOSE.UNAUTHORIZED, reason: `Unauthorized Request: ${verdict.reason}`}
  }

  private scope(
    job: string,
    route: NodeApiRoute,
    terms: {poster: Uint8Array; timeoutSeconds: number},
    expiry: number,
  ): HeaderScope {
    return {
      poster: terms.poster,
      node: this.host.address,
      job,
      route,
      timeoutSeconds: terms.timeoutSeconds,
      timePartExpirySeconds: expiry,
      nowMs: this.now(),
    }
  }
}

/** A follower that writes frames to a socket and is dropped once the socket falls MAX_SOCKET_BACKLOG behind. */
function socketFollower(
  socket: WebSocket,
  path: SocketPath,
  filter: {opId?: unknown; group?: unknown; type?: unknown},
): Follower {
  const frame: FramePath = SOCKET_PATHS[path]
  const kind = path === '/flog' ? 'flog' : path === '/log' ? 'log' : 'status'
  return {
    kind,
    matches: (entry: FeedEntry) =>
      kind === 'log'
        ? entry.log !== null
        : (filter.opId === undefined || entry.flog.opId === filter.opId) &&
          (filter.group === undefined || entry.flog.group === filter.group) &&
          (filter.type === undefined || entry.flog.type === filter.type),
    deliver(entry) {
      if (socket.readyState !== socket.OPEN || socket.bufferedAmount > MAX_SOCKET_BACKLOG) return false
      const data = 'seq' in entry ? (kind === 'log' ? entry.log : entry.flog) : (entry as StatusEntry)
      socket.send(encodeFrame(frame, data))
      return true
    },
    drop(reason) {
      if (socket.readyState !== socket.OPEN) return
      if (reason === 'slow') socket.close(CLOSE.TRY_AGAIN, 'Too far behind; reconnect to resume')
      else socket.close(1000, 'The job ended')
    },
  }
}

/** What `/job/<job>/info` shows: the flow state so far without logs, as the network's nodes show it. */
function infoObject(feed: JobFeed) {
  const result = feed.result
  return {
    status: result?.status ?? 'running',
    startTime: result?.startTime ?? feed.startTime,
    endTime: result?.endTime ?? null,
    errors: result?.errors ?? [],
    opStates: feed.ops.map((op) => ({...op})),
    operations: null,
  }
}

/** The request of a socket's first frame when it asks for `/exec` or `/terminal`; null for anything else. */
function sessionRequest(raw: RawData): {path: string; header?: unknown; body?: unknown} | null {
  try {
    const request = JSON.parse(raw.toString()) as {path?: unknown; header?: unknown; body?: unknown} | null
    return request?.path === EXEC_PATH || request?.path === TERMINAL_PATH
      ? (request as {path: string; header?: unknown; body?: unknown})
      : null
  } catch {
    return null
  }
}

function nodeKey(address: string): Uint8Array {
  return bs58.decode(address)
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {'content-type': 'application/json'})
  res.end(JSON.stringify(body))
}

/**
 * The request's one authorization header, its shape checked (parseHeader) before anything is looked up; `{reason}`
 * for one refused, two copies included: node:http's `req.headers` shows only the first.
 */
function authorization(req: IncomingMessage): string | {reason: string} {
  const header = singleHeader(requestHeaders(req), 'authorization')
  if (header === 'duplicate') return {reason: 'the request has more than one authorization header'}
  const parts = parseHeader(header)
  return 'reason' in parts ? parts : (header as string)
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {'content-type': 'text/plain; charset=utf-8'})
  res.end(body)
}

/** A control request's job, its operation or group, and what to do. */
interface ControlRoute {
  path: string
  job: string
  target: ControlTarget
  action: ControlAction
}

/**
 * `/job/<job>/operation/<op>/<action>`, `/job/<job>/group/<group>/<action>`, or the network's
 * `/job/<job>/group/<group>/operation/<op>/<action>` (the operation, in that group); null for any other path.
 */
function controlRoute(path: string): ControlRoute | null {
  const match =
    /^\/job\/([1-9A-HJ-NP-Za-km-z]{32,44})(?:\/group\/([^/]{1,256}))?(?:\/operation\/([^/]{1,256}))?\/(restart|stop)$/.exec(
      path,
    )
  if (!match) return null
  const [, job, group, op, action] = match as unknown as [
    string,
    string,
    string | undefined,
    string | undefined,
    string,
  ]
  if (group === undefined && op === undefined) return null
  let target: ControlTarget
  try {
    const inGroup = group === undefined ? {} : {group: decodeURIComponent(group)}
    target = op !== undefined ? {op: decodeURIComponent(op), ...inGroup} : {group: decodeURIComponent(group!)}
  } catch {
    return null
  }
  return {path, job, target, action: action as ControlAction}
}
