/**
 * The HTTP proxying of one request to a job's host port: the service's answer checked and passed on without the
 * gateway's own header, its silence bounded, and a request that may be sent again (an idempotent method without a
 * body) retried on another replica when the first fails before answering, so that a replica going away is never
 * seen by the client.
 */
import {type IncomingMessage, request, type ServerResponse} from 'node:http'
import {request as requestTls} from 'node:https'
import {pipeline} from 'node:stream'

import {invalidAnswer, withoutGatewayHeader} from './answer-checks.js'
import {type JobRoutes, type Upstream, upstreamAddress} from './job-routes.js'
import {type Reason, sendPage} from './pages.js'
import {GONE, gone, type Replicas} from './replicas.js'
import {RETRIED_METHODS} from './stable-url.js'

/** Proxies requests to the upstreams the routing table and the stable URLs' replicas name. */
export class HttpProxy {
  /** The bounds are the gateway's: a connection within `connectTimeoutMs`, no silence past `answerTimeoutMs`. */
  constructor(
    private readonly routes: JobRoutes,
    private readonly replicas: Replicas,
    private readonly timeouts: {connectTimeoutMs: number; answerTimeoutMs: number},
  ) {}

  /**
   * Proxies the request to the first upstream. When that one fails before any byte of an answer (GONE, or no
   * connection within the connect timeout) and the request can be sent again (an idempotent method without a body),
   * it goes to the next, as nginx's proxy_next_upstream does; a stable URL's replica that failed is ejected for a
   * while. `stable` (a stable URL's label) counts the request in flight to its job, ejects a failed replica, and
   * when the upstreams given are all tried, asks for the deployment's replicas again (each is tried once).
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    upstreams: Upstream[],
    stable: string | null,
    tried = new Set<string>(),
  ): void {
    const [target, ...rest] = upstreams as [Upstream, ...Upstream[]]
    tried.add(target.job)
    const resend = RETRIED_METHODS.has(req.method ?? '') && !hasBody(req)
    const release = stable !== null ? this.replicas.track(target.job, stable) : () => {}
    res.once('close', release)
    const badGateway = (message: string, reason: Reason) => sendPage(req, res, 502, 'Bad gateway', message, reason)
    /** The service's answer was refused (invalidAnswer) and the gateway answers 502 itself. */
    let replaced = false
    const address = upstreamAddress(target)
    const headers = address.hostHeader === null ? req.headers : {...req.headers, host: address.hostHeader}
    const send = address.tls ? requestTls : request
    const upstream = send(
      {
        host: address.host,
        port: address.port,
        servername: address.hostHeader?.replace(/:\d+$/, ''),
        method: req.method,
        path: req.url,
        headers,
      },
      (answer) => {
        answered()
        // Answering: a quiet stream is not cut; the job's end resets it.
        upstream.setTimeout(0)
        res.once('close', this.routes.hold(target.job, {hostPort: target.hostPort, abandon: () => res.destroy()}))
        const problem = invalidAnswer(answer)
        if (problem !== null) {
          replaced = true
          // A service that breaks HTTP once is not trusted with another request on the same connection.
          answer.destroy()
          return badGateway(`The job service's answer cannot be passed on: ${problem}.`, 'invalid-answer')
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
        // Node sends a head with the first byte of the body: a stream whose service sends its head first (an SSE
        // stream, a model loading before its first token) has it passed on at once. A body already here went out
        // with the head by then (the pipe flows before this), so a plain answer is still one write.
        let flowed = false
        answer.once('data', () => (flowed = true))
        setImmediate(() => {
          if (!flowed && !res.writableEnded && !res.destroyed) res.flushHeaders()
        })
      },
    )
    const fail = (code: string, message: string) => upstream.destroy(gone(code, message))
    const answered = this.routes.awaitAnswer(target.job, {
      hostPort: target.hostPort,
      abandon: () => fail('ECONNABORTED', 'the service was withdrawn before it answered'),
    })
    upstream.on('socket', (socket) => {
      if (!socket.connecting) return
      const timer = setTimeout(
        () => fail('ETIMEDOUT', 'no connection within the connect timeout'),
        this.timeouts.connectTimeoutMs,
      )
      socket.once('connect', () => clearTimeout(timer))
      socket.once('close', () => clearTimeout(timer))
    })
    // A replica that accepts and never answers (silent from the last byte either way) is given up as one gone.
    upstream.setTimeout(this.timeouts.answerTimeoutMs, () => fail('ETIMEDOUT', 'no answer within the answer timeout'))
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      answered()
      if (res.headersSent) {
        // The gateway's own 502 for an answer it refused is on its way: it is not cut.
        if (!replaced) res.destroy()
        return
      }
      const isGone = GONE.has(error.code ?? '')
      // A kept-alive connection the replica closed as it was reused is a race any client meets, not a failing
      // replica: resent, not ejected (a replica truly gone refuses the next connection, and is ejected then).
      const raced = upstream.reusedSocket && error.code === 'ECONNRESET'
      if (isGone && stable !== null && !raced) this.replicas.ejections.eject(target.job)
      // Node's parser refused the answer's status line, headers or framing (HPE_*): the service did answer.
      if (error.code?.startsWith('HPE_'))
        return badGateway(
          `The job service's answer is not valid HTTP: ${error.message.replace(/^Parse Error: /, '')}.`,
          'invalid-answer',
        )
      if (!resend || !isGone || res.destroyed) return badGateway('The job service did not answer.', 'unreachable')
      // A replica going away: the next one takes the request, so the client never sees it.
      res.off('close', release)
      release()
      void this.replicas
        .next(rest, stable, tried)
        .then((next) => {
          if (res.destroyed) return
          if (next.length > 0) return this.forward(req, res, next, stable, tried)
          badGateway('The job service did not answer.', 'unreachable')
        })
        .catch(() => res.destroy())
    })
    // Without a body the request is complete as it is, and can be sent again as it is.
    if (resend) upstream.end()
    else req.pipe(upstream)
  }
}

/** True when the request carries a body (a length above 0, or chunks). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}
