/**
 * The upgrade side of the gateway: an upgraded connection (a WebSocket, say) tunnelled to a job's host port as raw
 * bytes. The head of the service's answer is read and checked before anything is passed on, as Node parses no
 * answer here; after it the tunnel is bounded only once a side half-closes, so that a quiet WebSocket stays open
 * and a service that never closes its side holds no connection for good.
 */
import type {IncomingMessage} from 'node:http'
import {connect, type Socket} from 'node:net'
import {connect as connectTls} from 'node:tls'

import {invalidUpgradeHead, isGatewayHeader} from './answer-checks.js'
import {type JobRoutes, type Upstream, upstreamAddress} from './job-routes.js'
import {type Reason, upgradeAnswer} from './pages.js'
import {GONE, gone, type Replicas} from './replicas.js'

/** The largest head of an upgrade's answer the gateway reads (Node's own limit for a request's headers). */
const MAX_UPGRADE_ANSWER_HEAD = 16 * 1024

/** Tunnels upgraded connections to the upstreams the gateway names. */
export class Tunnels {
  /** The bounds are the gateway's: connect, answer (the head of the service's answer) and half-closed ones. */
  constructor(
    private readonly routes: JobRoutes,
    private readonly replicas: Replicas,
    private readonly timeouts: {connectTimeoutMs: number; answerTimeoutMs: number; halfClosedMs: number},
  ) {}

  /**
   * Connects the upgraded connection to the first upstream that takes it (the next when one fails to connect).
   * Until the head of the service's answer has come (within the answer timeout, or a 502), it is read and passed on
   * without the gateway's own header; then bytes flow both ways, with no idle bound while both sides are open. Once
   * either side ends its half, the other is ended too, and both are closed after the half-closed bound of quiet;
   * the job's end resets both. Through a stable URL (`stable`, its label) the tunnel counts in flight to its replica while
   * open, so that a drain waits for it as for a streamed answer.
   */
  tunnel(
    req: IncomingMessage,
    socket: Socket,
    head: Buffer,
    upstreams: Upstream[],
    stable: string | null = null,
  ): void {
    const {connectTimeoutMs, answerTimeoutMs, halfClosedMs} = this.timeouts
    const [target, ...others] = upstreams as [Upstream, ...Upstream[]]
    let connected = false
    /** The head of the service's answer, while it comes; null once it is passed on. */
    let answerHead: Buffer | null = Buffer.alloc(0)
    const release = stable !== null ? this.replicas.track(target.job, stable) : () => {}
    // No Nagle on the service's side either (the client's has none: Node's server sets it): a WebSocket's small
    // frames go as they are written, not after the previous one's acknowledgement.
    const address = upstreamAddress(target)
    const options = {port: address.port, host: address.host, noDelay: true}
    const onConnect = () => {
      connected = true
      clearTimeout(timer)
      // The request goes on as it came (its Upgrade headers included); from then on bytes flow both ways.
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`]
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!
        const value =
          address.hostHeader !== null && name.toLowerCase() === 'host' ? address.hostHeader : req.rawHeaders[i + 1]
        lines.push(`${name}: ${value}`)
      }
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`)
      if (head.length > 0) upstream.write(head)
      upstream.setTimeout(answerTimeoutMs)
      upstream.on('data', onHead)
      socket.pipe(upstream)
    }
    const upstream = address.tls
      ? connectTls({...options, servername: address.hostHeader!.replace(/:\d+$/, '')}, onConnect)
      : connect(options, onConnect)
    /** Resets the service's side: given up, it is told so (a FIN leaves a service that ignores it half-open). */
    const reset = () => {
      if (upstream.connecting || upstream.destroyed) upstream.destroy()
      else upstream.resetAndDestroy()
    }
    const unlink = this.routes.hold(target.job, {
      hostPort: target.hostPort,
      abandon: () => {
        // The job is gone: both sides reset, whatever they still send.
        reset()
        if (!socket.destroyed) socket.resetAndDestroy()
      },
    })
    const timer = setTimeout(
      () => upstream.destroy(gone('ETIMEDOUT', 'no connection within the connect timeout')),
      connectTimeoutMs,
    )
    const answer502 = (message: string, reason: Reason) => {
      reset()
      if (socket.destroyed) return
      socket.end(upgradeAnswer('502 Bad Gateway', reason, message))
      socket.setTimeout(halfClosedMs, () => socket.destroy())
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
      const kept = lines.filter((line) => !isGatewayHeader(line.split(':', 1)[0]!.trim()))
      const rest = answerHead.subarray(end + 4)
      answerHead = null
      upstream.setTimeout(0)
      socket.write(Buffer.from(`${kept.join('\r\n')}\r\n\r\n`, 'latin1'))
      if (rest.length > 0) socket.write(rest)
      upstream.pipe(socket)
    }
    const halfClosed = () => {
      socket.setTimeout(halfClosedMs)
      upstream.setTimeout(halfClosedMs)
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
        return this.tunnel(req, socket, head, others, stable)
      }
      drop()
    })
    socket.on('error', onSocketError)
    socket.on('end', onSocketEnd)
    socket.on('timeout', onSocketTimeout)
    upstream.on('close', () => {
      clearTimeout(timer)
      unlink()
      release()
      if (socket.destroyed || (!connected && others.length > 0)) return
      // What the service sent is flushed to the client, then the connection goes (its half is of no use now).
      if (!socket.writableEnded) socket.end()
      socket.setTimeout(halfClosedMs)
      if (socket.writableFinished) socket.destroy()
      else socket.once('finish', () => socket.destroy())
    })
    socket.on('close', onSocketClose)
  }
}
