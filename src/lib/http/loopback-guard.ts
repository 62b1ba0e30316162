/**
 * What keeps web pages away from the services gpunet binds to loopback (the localnet's RPC, WebSocket and
 * gateway, `secrets serve` on 127.0.0.1): a browser lets any page send requests to 127.0.0.1, and a DNS name
 * rebound to 127.0.0.1 lets a page read the answers too. So, as Anvil's `--allow-origin` and Hardhat's node
 * learned to (docs/localnet.md "Web pages"):
 * - the request carries exactly one Host, and it names the service (a rebound name is not one of them);
 * - a browser's Origin is refused unless it is the service's own or allowed (GPUNET_ALLOW_ORIGIN; none by
 *   default; `*` allows any).
 * Clients that are not browsers (web3.js, the CLI, curl) send no Origin and the name they connect to.
 */
import type {IncomingMessage} from 'node:http'
import {BlockList, isIP} from 'node:net'

/** The environment variable listing the browser origins allowed besides a service's own, comma separated. */
export const ALLOW_ORIGIN_ENV = 'GPUNET_ALLOW_ORIGIN'

/** The names every loopback service answers to. */
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]'])

/** 127.0.0.0/8 and ::1, in every spelling: BlockList reads `0:0:0:0:0:0:0:1` and `::ffff:127.0.0.1` as they are. */
const LOOPBACK_ADDRESSES = new BlockList()
LOOPBACK_ADDRESSES.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK_ADDRESSES.addAddress('::1', 'ipv6')

/**
 * True for an address only this machine reaches (127.x, ::1, an IPv4-mapped 127.x), however it is written;
 * `localhost` too. Any other name is not known to be loopback: a caller that must guard decides from the
 * address it actually bound.
 */
export function isLoopbackAddress(address: string): boolean {
  const plain = address.toLowerCase().replace(/^\[(.*)\]$/, '$1')
  if (plain === 'localhost') return true
  const family = isIP(plain)
  return family !== 0 && LOOPBACK_ADDRESSES.check(plain, family === 4 ? 'ipv4' : 'ipv6')
}

/** Who a loopback service answers: the host names it serves besides the loopback ones, and allowed origins. */
export interface LoopbackPolicy {
  /** True for an extra host name (lowercase, without port) the service serves, e.g. `*.node.localhost`. */
  servesName?: (name: string) => boolean
  /** Browser origins allowed besides the service's own (the allowOrigin setting, GPUNET_ALLOW_ORIGIN); none by default. */
  allowedOrigins?: readonly string[]
}

/** Why a request is refused: the HTTP status and a message naming what to change. */
export interface Refusal {
  status: 400 | 403
  message: string
}

/** The refusal of a request a web page (or a rebound DNS name) could have sent; null for one to answer. */
export function webPageRefusal(req: IncomingMessage, policy: LoopbackPolicy = {}): Refusal | null {
  let hosts = 0
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]?.toLowerCase() === 'host') hosts++
  if (hosts !== 1) return {status: 400, message: 'a request carries exactly one Host header'}
  const host = (req.headers.host ?? '').toLowerCase()
  const name = host.replace(/:\d*$/, '')
  if (!LOOPBACK_NAMES.has(name) && !policy.servesName?.(name)) {
    return {status: 403, message: `this service does not serve the host name ${JSON.stringify(name.slice(0, 100))}`}
  }
  const origin = req.headers.origin
  // A page is same-origin with the scheme it was served by: https on a TLS connection (the gateway's https port).
  const scheme = (req.socket as {encrypted?: boolean}).encrypted === true ? 'https' : 'http'
  if (origin === undefined || origin === `${scheme}://${host}`) return null
  const allowed = policy.allowedOrigins ?? []
  if (allowed.includes('*') || allowed.includes(origin)) return null
  return {
    status: 403,
    message: `requests from the web page at ${JSON.stringify(origin.slice(0, 200))} are refused; allow its origin with ${ALLOW_ORIGIN_ENV}`,
  }
}

/** True when `contentType` is `application/json`, with or without a charset parameter. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false
  const [type, ...params] = contentType.split(';').map((part) => part.trim().toLowerCase())
  return type === 'application/json' && params.every((param) => /^charset=("?)utf-8\1$/.test(param))
}
