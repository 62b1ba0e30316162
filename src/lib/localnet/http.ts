/** Small HTTP helpers shared by the localnet's routes, and the shape of a service mounted on its port. */
import type {IncomingMessage, ServerResponse} from 'node:http'

/**
 * A service sharing the localnet's process and HTTP port (the content store today; the secrets service and the
 * node gateway can mount the same way).
 */
export interface SubService {
  name: string
  /** True for the request paths this service answers. */
  matches(path: string): boolean
  handle(req: IncomingMessage, res: ServerResponse, path: string): void | Promise<void>
  close?(): Promise<void> | void
}

/**
 * Reads a request body; null once it is larger than `limit` bytes. The rest of such a body is read and dropped
 * (not destroyed), so the answer (sendTooLarge) still reaches the client before the connection closes.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      if (size > limit) return
      size += chunk.length
      if (size <= limit) chunks.push(chunk)
      else {
        chunks.length = 0
        resolve(null)
      }
    })
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

/** Sends a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {'content-type': 'application/json'})
  res.end(JSON.stringify(body))
}

/**
 * Answers 413 and closes the connection (`connection: close`): the rest of the body was not read, so the
 * connection cannot carry another request.
 */
export function sendTooLarge(req: IncomingMessage, res: ServerResponse, body: unknown): void {
  res.shouldKeepAlive = false
  res.writeHead(413, {'content-type': 'application/json', connection: 'close'})
  res.end(JSON.stringify(body), () => req.socket.destroySoon())
}
