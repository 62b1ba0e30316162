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
 *
 * A large body is copied as it arrives into one buffer of its declared length, never joined at its end: joining
 * 60 MiB held the loop 45 ms. The buffer is taken once an eighth of the declared length has arrived, so a client
 * that declares much and sends little holds little.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'])
    const expected = Number.isSafeInteger(declared) && declared >= 0 && declared <= limit ? declared : null
    let chunks: Buffer[] | null = []
    let whole: Buffer | null = null
    let size = 0
    req.on('data', (chunk: Buffer) => {
      if (size > limit) return
      if (size + chunk.length > limit) {
        size = limit + 1
        chunks = null
        whole = null
        return resolve(null)
      }
      if (whole && size + chunk.length <= whole.length) chunk.copy(whole, size)
      else chunks!.push(chunk)
      size += chunk.length
      if (!whole && expected !== null && size >= expected / 8 && size <= expected) {
        whole = Buffer.allocUnsafe(expected)
        let at = 0
        for (const part of chunks!) at += part.copy(whole, at)
        chunks = []
      }
    })
    req.on('end', () => {
      if (size > limit) return resolve(null)
      if (!whole) return resolve(Buffer.concat(chunks!))
      // A body longer than declared (the parser refuses one) is joined from what overflowed.
      resolve(chunks!.length === 0 ? whole.subarray(0, size) : Buffer.concat([whole, ...chunks!]).subarray(0, size))
    })
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
