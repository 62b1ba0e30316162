/**
 * What of a job service's answer the gateway refuses to pass on, and the header it takes off: the same rules for a
 * plain answer (read by Node's parser) and for the head of an upgrade's answer (read raw, as the tunnel passes its
 * bytes on unparsed), so that no answer Node would refuse to send reaches a client either way.
 */
import {type IncomingMessage, validateHeaderName, validateHeaderValue} from 'node:http'

import {GATEWAY_ANSWER_HEADER} from '../node/gateway-answer.js'

/** True for the gateway's own header: only the gateway's answers carry it, a service's would pass for its own. */
export function isGatewayHeader(name: string): boolean {
  return name.toLowerCase() === GATEWAY_ANSWER_HEADER
}

/** A service's raw headers without the gateway's own header: only the gateway's answers carry it. */
export function withoutGatewayHeader(raw: string[]): string[] {
  const kept: string[] = []
  for (let i = 0; i < raw.length; i += 2) if (!isGatewayHeader(raw[i]!)) kept.push(raw[i]!, raw[i + 1] ?? '')
  return kept
}

/**
 * Why a service's answer cannot be passed on, or null when it can: a final status outside 200-599 (Node's client
 * hands on 000-099, 101 to a request that asked for no upgrade and 600-999, and writeHead throws below 100), or a
 * header name or value Node would refuse to send.
 */
export function invalidAnswer(answer: IncomingMessage): string | null {
  const status = answer.statusCode ?? 0
  if (!Number.isInteger(status) || status < 200 || status > 599) return `status ${status}`
  const headers = answer.rawHeaders
  for (let i = 0; i < headers.length; i += 2)
    if (unsendable(headers[i]!, headers[i + 1] ?? '')) return unsendableHeader(headers[i]!)
  return null
}

/** Why the head of a service's answer to an upgrade (its lines) cannot be passed on, or null when it can. */
export function invalidUpgradeHead(lines: string[]): string | null {
  // eslint-disable-next-line no-control-regex -- a reason phrase with a control byte is what is refused
  const status = /^HTTP\/1\.[01] (\d{3})(?: [^\x00-\x08\x0a-\x1f\x7f]*)?$/.exec(lines[0] ?? '')
  if (!status) return 'a malformed status line'
  const code = Number(status[1])
  if (code < 100 || code > 599) return `status ${code}`
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon < 0 || unsendable(line.slice(0, colon), line.slice(colon + 1).trim())) return unsendableHeader(line)
  }
  return null
}

/** The reason given for a header refused (its start: a service's header may be any length). */
function unsendableHeader(header: string): string {
  return `a header that cannot be sent on: ${JSON.stringify(header.slice(0, 100))}`
}

/** True when Node would refuse to send a header of this name and value. */
function unsendable(name: string, value: string): boolean {
  try {
    validateHeaderName(name)
    validateHeaderValue(name, value)
    return false
  } catch {
    return true
  }
}
