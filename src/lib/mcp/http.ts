/**
 * `gpunet mcp --http PORT`: the SDK's Streamable HTTP transport on a bare `node:http` server bound to 127.0.0.1,
 * behind the guard of every loopback service (one Host that names it, no web page's Origin: loopback-guard.ts).
 * Stateless, as the SDK's stateless mode runs: a server and a transport per POST, over the one session (its quotes,
 * caps and network), so nothing is kept per client. It is not mounted on the services' fastify base
 * (http/api-server.ts): the SDK reads and writes the raw request and response itself, and the base's JSON parser,
 * error shape and not-found answer would all have to be stepped around; the guard is the part that must be the same.
 */
import {createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

import {StreamableHTTPServerTransport} from '@modelcontextprotocol/sdk/server/streamableHttp.js'

import {MAX_INPUT_BYTES} from './arguments.js'
import {createMcpServer} from './server.js'
import type {McpSession} from './session.js'
import {webPageRefusal} from '../http/loopback-guard.js'

/** The path the MCP endpoint answers on. */
export const MCP_PATH = '/mcp'

/** A body's most: a call's arguments (1 MiB) and the JSON-RPC envelope around them. */
const MAX_BODY_BYTES = MAX_INPUT_BYTES + 64 * 1024

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, {'content-type': 'application/json'})
  res.end(JSON.stringify({jsonrpc: '2.0', error: {code, message}, id: null}))
}

/**
 * The body, or null when it is over the limit: read to its end all the same (up to 16 times the limit), so the
 * refusal reaches a client still sending instead of a closed socket.
 */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > 16 * MAX_BODY_BYTES) req.destroy()
      else if (size <= MAX_BODY_BYTES) chunks.push(chunk)
    })
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

async function answer(
  session: McpSession,
  req: IncomingMessage,
  res: ServerResponse,
  allowedOrigins: readonly string[],
) {
  const refusal = webPageRefusal(req, {allowedOrigins})
  if (refusal) return jsonRpcError(res, refusal.status, -32000, refusal.message)
  if ((req.url ?? '').split('?')[0] !== MCP_PATH) return jsonRpcError(res, 404, -32000, `MCP answers on ${MCP_PATH}`)
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST')
    return jsonRpcError(res, 405, -32000, 'this server is stateless: POST requests only')
  }
  const body = await readBody(req)
  if (body === null) return jsonRpcError(res, 413, -32600, 'the request is over the 1 MiB a call may carry')
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch {
    return jsonRpcError(res, 400, -32700, 'the body is not JSON')
  }
  const server = createMcpServer(session)
  const transport = new StreamableHTTPServerTransport({sessionIdGenerator: undefined})
  res.on('close', () => {
    void transport.close()
    void server.close()
  })
  await server.connect(transport)
  await transport.handleRequest(req, res, parsed)
}

/** Serves the session over HTTP on 127.0.0.1:`port` (0: any free port); resolves once it listens. */
export async function serveMcpHttp(
  session: McpSession,
  port: number,
  options: {allowedOrigins?: readonly string[]} = {},
): Promise<{server: HttpServer; url: string}> {
  const server = createServer((req, res) => {
    answer(session, req, res, options.allowedOrigins ?? []).catch(() => {
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'the request failed')
      else res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  const {port: bound} = server.address() as AddressInfo
  return {server, url: `http://127.0.0.1:${bound}${MCP_PATH}`}
}
