/** Real HTTP servers on 127.0.0.1 for the HTTP client's tests: an origin and a forward proxy. */
import {once} from 'node:events'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'

import {closeHttpAgents} from '../../src/lib/http/client.js'

/** A server under test: its base URL, the requests it saw ("METHOD /path"), and a close that drops connections. */
export interface TestServer {
  url: string
  port: number
  seen: string[]
  close(): Promise<void>
}

async function listen(server: Server, seen: string[]): Promise<TestServer> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const {port} = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** An origin server on 127.0.0.1:0 answering with `handler`; it records each request line. */
export function startServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  const seen: string[] = []
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    handler(req, res)
  })
  return listen(server, seen)
}

/**
 * A forward proxy on 127.0.0.1:0 that answers every proxied request itself (`200 via proxy`, or with `handler`,
 * standing in for the origin behind it) and refuses every CONNECT tunnel with 502, recording both: enough to see
 * which requests a client sends through it.
 */
export function startProxy(
  handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('via proxy'),
): Promise<TestServer> {
  const seen: string[] = []
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    handler(req, res)
  })
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    seen.push(`CONNECT ${req.url}`)
    socket.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n')
  })
  return listen(server, seen)
}

const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy']

/** Sets the proxy variables for one test (the others unset) and drops the agents that read the previous ones. */
export async function withProxyVariables(values: Record<string, string>, run: () => Promise<void>): Promise<void> {
  const saved = Object.fromEntries(PROXY_VARIABLES.map((name) => [name, process.env[name]]))
  for (const name of PROXY_VARIABLES) delete process.env[name]
  Object.assign(process.env, values)
  await closeHttpAgents()
  try {
    await run()
  } finally {
    for (const name of PROXY_VARIABLES) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
    await closeHttpAgents()
  }
}
