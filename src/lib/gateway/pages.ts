/**
 * The answers the gateway gives itself, never a job service's: a page (HTML for browsers, JSON otherwise) on an
 * HTTP request, or a raw head written on an upgrade's socket, for which Node has no response object. Every one
 * carries the gateway's header naming why, so a client waiting for a service never counts them as its answer.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'

import {GATEWAY_ANSWER_HEADER} from '../node/gateway-answer.js'
import {GATEWAY_DOMAIN} from './job-routes.js'

/** Why the gateway answered itself: the value of its header (node/gateway-answer.ts). */
export type Reason =
  | 'not-ready'
  | 'no-service'
  | 'unreachable'
  | 'refused'
  | 'no-replica'
  /** A deployment starting from zero replicas, its request turned away past the hold bounds (holding.ts). */
  | 'starting'
  | 'invalid-answer'
  /** A network name (network-names.ts) with no member serving it now: frps's not-found page. */
  | 'no-member'

/** The `error` of a JSON page by its status. */
const ERRORS: Record<number, string> = {404: 'not_found', 502: 'bad_gateway', 503: 'unavailable'}

/** The JSON body of a page with this status. */
function errorBody(status: number, message: string): string {
  return `${JSON.stringify({error: ERRORS[status] ?? 'refused', message})}\n`
}

/** The 404 page of a host naming no job service that is ready (`job`), or naming none at all (null). */
export function notFound(req: IncomingMessage, res: ServerResponse, job: string | null): void {
  const message = job
    ? `No service of job ${job} is ready here: it is starting (its health checks have not passed yet) or has ended.`
    : `This is the gpunet node gateway: job services answer at http://<job>.${GATEWAY_DOMAIN}:<port>/.`
  sendPage(req, res, 404, 'Page not found', message, job ? 'not-ready' : 'no-service')
}

/** An HTML page for browsers, JSON for everyone else. */
export function sendPage(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  title: string,
  message: string,
  reason: Reason,
): void {
  dropBody(req, res)
  if ((req.headers.accept ?? '').includes('text/html')) {
    const escaped = message.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)
    res.writeHead(status, {'content-type': 'text/html; charset=utf-8', [GATEWAY_ANSWER_HEADER]: reason})
    res.end(`<!doctype html><title>${title}</title><h1>${title}</h1><p>${escaped}</p>\n`)
    return
  }
  res.writeHead(status, {'content-type': 'application/json', [GATEWAY_ANSWER_HEADER]: reason})
  res.end(errorBody(status, message))
}

/**
 * frps's answer for a network name (network-names.ts) it serves no proxy for: 404, an HTML page whatever the client
 * accepts (in frps's words' spirit, not its text), with the gateway's header so gpunet's own probes never count it as
 * a service's.
 */
export function frpsNotFound(req: IncomingMessage, res: ServerResponse): void {
  dropBody(req, res)
  res.writeHead(404, {'content-type': 'text/html', [GATEWAY_ANSWER_HEADER]: 'no-member'})
  res.end(
    '<!doctype html><title>Not Found</title><h1>Not found.</h1>' +
      '<p>No service answers at this address now. Try again later.</p>\n',
  )
}

/** A body still coming (sent a byte at a time, say) is not waited for: the connection goes with the page. */
function dropBody(req: IncomingMessage, res: ServerResponse): void {
  req.resume()
  if (!req.complete) res.shouldKeepAlive = false
}

/**
 * The raw answer to an upgrade the gateway refuses or cannot tunnel (`status`, e.g. `404 Not Found`): it closes the
 * connection, and carries a JSON body only when given a message.
 */
export function upgradeAnswer(status: string, reason: Reason, message?: string): string {
  const body = message === undefined ? '' : errorBody(Number.parseInt(status, 10), message)
  const type = message === undefined ? '' : 'content-type: application/json\r\n'
  return (
    `HTTP/1.1 ${status}\r\n${GATEWAY_ANSWER_HEADER}: ${reason}\r\n${type}` +
    `connection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
}

/** frps's not-found answer on an upgrade's socket. */
export const FRPS_NOT_FOUND_UPGRADE = upgradeAnswer('404 Not Found', 'no-member')
