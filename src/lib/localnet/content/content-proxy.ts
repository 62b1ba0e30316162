/**
 * A forward proxy for the network's SDK, whose content hosts are built in: its HTTP client (axios) sends requests
 * for `https://api.pinata.cloud/pinning/*` and `https://nosana.mypinata.cloud/ipfs/*` to an `HTTP(S)_PROXY` as plain
 * absolute-form requests, which this proxy answers from the localnet's content store. Every other host, and every
 * `CONNECT` (a tunnel it could not look into), is refused: nothing leaves the machine through it.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {Duplex} from 'node:stream'

import {sendJson, type SubService} from '../http.js'

/** The hosts served, each with the paths of the content store it may reach. */
const SERVED_HOSTS: Record<string, (path: string) => boolean> = {
  'api.pinata.cloud': (path) => path.startsWith('/pinning/'),
  'nosana.mypinata.cloud': (path) => path.startsWith('/ipfs/'),
}

const REFUSAL = `the localnet's proxy serves only ${Object.keys(SERVED_HOSTS).join(' and ')} (pinning and gateway paths) from its content store; nothing leaves this machine through it`

/** The proxy, not yet listening; `content` is the content store's service. */
export function contentProxy(content: SubService): Server {
  const server = createServer((req, res) => void serve(req, res, content))
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.end(`HTTP/1.1 405 Method Not Allowed\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`)
  })
  return server
}

async function serve(req: IncomingMessage, res: ServerResponse, content: SubService): Promise<void> {
  // A web page cannot configure a proxy, but it can send a request to one: those are not for us.
  if (req.headers.origin !== undefined) {
    req.resume()
    return sendJson(res, 403, {error: 'requests from web pages are refused'})
  }
  let target: URL
  try {
    target = new URL(req.url ?? '')
  } catch {
    req.resume()
    return sendJson(res, 400, {error: `this is a forward proxy: send absolute-form requests (${REFUSAL})`})
  }
  const allowed = Object.hasOwn(SERVED_HOSTS, target.hostname) ? SERVED_HOSTS[target.hostname]! : undefined
  const defaultPort = target.port === '' || target.port === '443' || target.port === '80'
  if (!allowed || !defaultPort || !allowed(target.pathname) || !content.matches(target.pathname)) {
    req.resume()
    return sendJson(res, 403, {error: `refused ${target.host}${target.pathname}: ${REFUSAL}`})
  }
  req.url = `${target.pathname}${target.search}`
  try {
    await content.handle(req, res, target.pathname)
  } catch (error) {
    if (!res.headersSent) sendJson(res, 500, {error: (error as Error).message})
    else res.destroy()
  }
}
