/**
 * Every copy of a request's headers, for the servers that authenticate from them (the deployment manager, the
 * node API): node:http's `headers` keeps only the first of two `authorization` lines, so a second copy would go
 * unseen there and a valid first one would open the route whatever followed it.
 */
import type {IncomingMessage} from 'node:http'

/** Request headers as node:http gives them. */
export type RequestHeaders = Record<string, string | string[] | undefined>

/** Every copy of every header of a request (node:http's `headersDistinct`). */
export function requestHeaders(request: IncomingMessage): RequestHeaders {
  return request.headersDistinct
}

/**
 * The one value of header `name` (lower case) in `headers`, matched case-insensitively; undefined when it is
 * absent or empty, 'duplicate' when it was sent more than once (a server refuses that rather than pick one).
 */
export function singleHeader(headers: RequestHeaders, name: string): string | undefined | 'duplicate' {
  let value: string | undefined
  let seen = 0
  for (const key of Object.keys(headers)) {
    if (key.length !== name.length || key.toLowerCase() !== name) continue
    const found = headers[key]
    if (found === undefined) continue
    const values = Array.isArray(found) ? found : [found]
    seen += values.length
    value = values[0]
  }
  if (seen > 1) return 'duplicate'
  return typeof value === 'string' && value !== '' ? value : undefined
}
