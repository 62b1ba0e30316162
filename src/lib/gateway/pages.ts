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
  req.resume()
  // A body still coming (sent a byte at a time, say) is not waited for: the connection goes with the page.
  if (!req.complete) res.shouldKeepAlive = false
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
