/**
 * The gateway's https side: a TLS listener of its own port whose connections, once their handshake is done, are
 * handed to the gateway's one http server, so that https serves exactly what http serves (the same requests,
 * upgrades, node APIs, header and idle bounds). A handshake is bounded on its own: a stranger that connects and
 * never finishes one is closed after `handshakeTimeoutMs`, and holds one of its source's connections meanwhile.
 */
import {once} from 'node:events'
import type {AddressInfo, Socket} from 'node:net'
import {createServer, type Server, type TLSSocket} from 'node:tls'

/** A handshake must finish within this (Node's default is 120 s): one that never does holds a connection. */
export const GATEWAY_HANDSHAKE_TIMEOUT_MS = 10_000

/** The server certificate (with what chains it to the authority) and its key, in PEM. */
export interface GatewayTls {
  key: string
  cert: string
}

/** How the https side is bounded and to whom its connections go. */
export interface HttpsSideOptions {
  handshakeTimeoutMs: number
  /** Connections held at once on the https port (the http port's own cap, Node's `maxConnections`). */
  maxConnections: number
  /** Counts a new connection against its source's cap (or closes it), before its handshake. */
  admit: (socket: Socket) => void
  /** Takes a connection whose handshake is done, with the TCP connection under it. */
  secure: (socket: TLSSocket, transport: Socket) => void
}

/** The https listener in front of a gateway's http server. */
export class HttpsSide {
  private readonly server: Server
  /** The TCP connections by their peer (address and port), for the TLS socket over each to be matched to it. */
  private readonly transports = new Map<string, Socket>()
  private port = 0

  constructor(tls: GatewayTls, options: HttpsSideOptions) {
    this.server = createServer({
      key: tls.key,
      cert: tls.cert,
      handshakeTimeout: options.handshakeTimeoutMs,
      // As the http port's (Node's http server sets it): no Nagle, so a stream's small writes go as written.
      noDelay: true,
      // HTTP/1.1 only: the gateway's server speaks it (and its upgrades), not h2.
      ALPNProtocols: ['http/1.1'],
    })
    this.server.maxConnections = options.maxConnections
    this.server.on('connection', (socket: Socket) => {
      const peer = peerOf(socket)
      this.transports.set(peer, socket)
      socket.once('close', () => this.transports.get(peer) === socket && this.transports.delete(peer))
      options.admit(socket)
    })
    this.server.on('secureConnection', (socket: TLSSocket) => {
      const transport = this.transports.get(peerOf(socket))
      if (transport && !transport.destroyed) options.secure(socket, transport)
      else socket.destroy()
    })
    // A failed or timed-out handshake: Node leaves the connection to this listener when there is one.
    this.server.on('tlsClientError', (_error, socket: TLSSocket) => socket.destroy())
  }

  /** Listens on 127.0.0.1 (`port` 0 picks a free one) and returns the port. */
  async listen(port: number): Promise<number> {
    this.server.listen(port, '127.0.0.1')
    await Promise.race([
      once(this.server, 'listening'),
      once(this.server, 'error').then(([error]) => Promise.reject(error)),
    ])
    this.port = (this.server.address() as AddressInfo).port
    return this.port
  }

  get listeningPort(): number {
    return this.port
  }

  /** Serves new handshakes with another certificate (a renewal); open connections keep theirs. */
  renew(tls: GatewayTls): void {
    this.server.setSecureContext({key: tls.key, cert: tls.cert})
  }

  /** Stops listening (the gateway closes the connections it handed over). */
  async close(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve))
  }
}

/** A connection's peer, the same for the TLS socket and the TCP connection under it. */
function peerOf(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`
}
