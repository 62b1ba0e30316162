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

/** Reads a request body; null when it is larger than `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) return null
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {'content-type': 'application/json'})
  res.end(JSON.stringify(body))
}
