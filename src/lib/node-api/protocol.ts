/**
 * The node API's wire format (reference/network-job-plane.md §4), shared by gpunet's client and the localnet's
 * node: the authorization header, the WebSocket request and frames of `/flog`, `/log` and `/status`, and where a
 * node's API is reached. One module, so the client and the emulation can never read the protocol two ways.
 */
import bs58 from 'bs58'

import {decodeBase58, hasBase58Shape} from '../text/base58-text.js'
import {verifySignature} from '../keys/ed25519.js'

/** The network's nodes refuse a WebSocket header whose time part is this old (the SDK's default expiry). */
export const SOCKET_HEADER_EXPIRY_S = 300

/**
 * gpunet's node-API message is refused this long after the time it names (sooner when the job's timeout is
 * shorter): a header the deployment manager's vault signed for an API key opens nothing once the key is revoked
 * and this time has passed, whoever copied it.
 */
export const CLIENT_HEADER_EXPIRY_S = 300

/** A header's time part may run this far ahead of the node's clock (the network allows any; the localnet less). */
export const MAX_CLOCK_SKEW_MS = 60_000

/** The three subscriptions of the WebSocket, and the name their frames come back under. */
export const SOCKET_PATHS = {'/flog': 'flog', '/log': 'log', '/status': 'state'} as const
export type SocketPath = keyof typeof SOCKET_PATHS
export type FramePath = (typeof SOCKET_PATHS)[SocketPath]

/** What a client sends on the WebSocket to subscribe. */
export interface SocketRequest {
  path: SocketPath
  header: string
  body: {jobAddress: string; address: string; opId?: string; group?: string; type?: string}
}

/** A `/flog` entry: container lines are `type: "container"`; the node's own lines have `opId: "system"`. */
export interface FlogEntry {
  opId: string
  group: string
  type: 'container' | 'info' | 'error'
  /** Milliseconds; strictly increasing per job on the network's nodes. */
  timestamp: number
  message: string | {type: string; payload?: unknown}
  /** Localnet only: the entry's number within its job, so a client drops what a reconnect replays. */
  seq?: number
  /** Localnet only: which stream a container line came from (the network does not tell them apart). */
  stream?: 'stdout' | 'stderr'
}

/** A `/log` entry: container lines are `type: "log"`; other types are the node's progress. */
export interface NodeLogEntry {
  log: string
  method: string
  type: string
  timestamp: number
  job?: string
  payload?: unknown
  /** Localnet only, as in FlogEntry. */
  seq?: number
}

/** A `/status` entry. */
export interface StatusEntry {
  status: string
  state: Record<string, string>
  timestamp: number
  index: number
}

/** Close codes of the node API's WebSocket. */
export const CLOSE = {
  /** The header is missing, malformed, expired or not the poster's signature. */
  UNAUTHORIZED: 3000,
  INVALID_PATH: 3003,
  /** No jobAddress, or no job at it. */
  INVALID_BODY: 1007,
  /** The node holds no log of that job. */
  UNKNOWN_JOB: 1008,
  /** Too many followers of one job, or one that reads too slowly to keep up: try again. */
  TRY_AGAIN: 1013,
} as const

/** Encodes a frame as the network's nodes send it: `data` is JSON text inside the JSON. */
export function encodeFrame(path: FramePath, data: unknown): string {
  return JSON.stringify({path, data: JSON.stringify(data)})
}

/** Decodes a frame; null for anything that is not `{path: string, data: "<JSON>"}`. */
export function decodeFrame(text: string): {path: string; data: unknown} | null {
  try {
    const frame = JSON.parse(text) as {path?: unknown; data?: unknown}
    // null or a number parses too: reading `path` of null throws, which answers null below.
    if (typeof frame.path !== 'string' || typeof frame.data !== 'string') return null
    return {path: frame.path, data: JSON.parse(frame.data)}
  } catch {
    return null
  }
}

const CLIENT_PREFIX = 'gpunet-node-api'
const CLIENT_MESSAGE = /^gpunet-node-api action=(\S+) node=(\S+) job=(\S+) at=(\S+)$/

/** What a node-API route lets its caller do: gpunet's client names it in the message it signs. */
export type NodeApiAction = 'read' | 'stop' | 'restart' | 'exec'

/**
 * Every node-API route and the action it takes: the socket's subscriptions by path, the REST routes by name. A
 * route another issue adds joins this table, so one rule (checkHeader) opens every route.
 */
export const ROUTE_ACTIONS = {
  '/flog': 'read',
  '/log': 'read',
  '/status': 'read',
  info: 'read',
  endpoints: 'read',
  results: 'read',
  stop: 'stop',
  'operation-stop': 'stop',
  'operation-restart': 'restart',
  stats: 'read',
  '/exec': 'exec',
} as const satisfies Record<string, NodeApiAction>
export type NodeApiRoute = keyof typeof ROUTE_ACTIONS

/** The message the network's CLI signs for its node-API header (SIGN_MESSAGE in nosana-cli's `.env`). */
export const NETWORK_CLI_MESSAGE = 'Hello Nosana Node!'

/**
 * The routes the network's CLI calls with NETWORK_CLI_MESSAGE, and whether it sends a time part there: `job get`
 * follows `/log` on the socket without one and reads `endpoints` with one; its job manager posts `stop` without
 * one. That message opens no other route, and no other message from outside gpunet opens any.
 */
const NETWORK_CLI_ROUTES: Partial<Record<NodeApiRoute, 'lasting' | 'timed'>> = {
  '/log': 'lasting',
  stop: 'lasting',
  endpoints: 'timed',
}

/** The job a gpunet client message names, or null for any other text (the deployment manager's /header checks it). */
export function clientMessageJob(message: string): string | null {
  return CLIENT_MESSAGE.exec(message)?.[3] ?? null
}

/**
 * The message gpunet's client signs: it names the action, the node, the job and the time, so a header read off
 * the wire opens nothing else and expires CLIENT_HEADER_EXPIRY_S after that time (or with the job's timeout). No `:`
 * in it (the header's separator).
 */
export function clientMessage(action: NodeApiAction, node: string, job: string, nowMs: number): string {
  return `${CLIENT_PREFIX} action=${action} node=${node} job=${job} at=${nowMs}`
}

/** The header gpunet's client sends: `<message>:<base58 signature>:<unix ms>`, signed by the job's poster. */
export function signHeader(
  sign: (message: Uint8Array) => Uint8Array,
  scope: {action: NodeApiAction; node: string; job: string},
  nowMs = Date.now(),
): string {
  const message = clientMessage(scope.action, scope.node, scope.job, nowMs)
  return `${message}:${bs58.encode(sign(Buffer.from(message, 'utf8')))}:${nowMs}`
}

/** What a node checks a header against. */
export interface HeaderScope {
  /** The job's poster (`job.project`): the only key whose signature opens the job. */
  poster: Uint8Array
  node: string
  job: string
  /** The route asked for: the action a gpunet message must name, and whether the network CLI's message opens it. */
  route: NodeApiRoute
  /** The job's timeout in seconds: a REST header's time part expires with it, a gpunet header at most with it. */
  timeoutSeconds: number
  /** How long a time part is good for: the job's timeout for REST calls, SOCKET_HEADER_EXPIRY_S on the socket. */
  timePartExpirySeconds: number
  nowMs: number
}

export type HeaderVerdict = {ok: true; lasting: boolean} | {ok: false; reason: string}

/** A header's parts, its signature's shape checked and nothing decoded. */
export interface HeaderParts {
  message: string
  signature: string
  time: string | undefined
}

/**
 * Splits a header and checks the shape of its signature (base58-text.ts) without decoding anything, so a node
 * refuses a malformed header before it looks the job up; `{reason}` for one it refuses.
 */
export function parseHeader(header: unknown): HeaderParts | {reason: string} {
  if (typeof header !== 'string' || header === '') return {reason: 'no authorization header'}
  const parts = header.split(':', 4)
  const [message, signature, time] = parts
  if (parts.length > 3 || !message || !signature) {
    return {reason: 'the header is not <message>:<signature>[:<unix ms>]'}
  }
  if (!hasBase58Shape(signature, 'signature')) return {reason: 'the signature is not base58'}
  return {message, signature, time}
}

/**
 * Checks an authorization header: the poster's signature over the message, an unexpired time part, and one of
 * two messages. gpunet's names the route's action, this node and job, and a time younger than CLIENT_HEADER_EXPIRY_S
 * and the job's timeout (no time may lie beyond MAX_CLOCK_SKEW_MS ahead). The network CLI's NETWORK_CLI_MESSAGE
 * opens only the routes that CLI calls with it (a `lasting` header has no time part, as the CLI sends there). Every other message is
 * refused, with or without a time part: the time part is not signed, so anyone holding a poster's signature over
 * some other text (a secrets service holds login signatures) could append one.
 */
export function checkHeader(header: unknown, scope: HeaderScope): HeaderVerdict {
  const parts = parseHeader(header)
  if ('reason' in parts) return {ok: false, reason: parts.reason}
  const {message, signature, time} = parts
  const signatureBytes = decodeBase58(signature, 'signature')
  if (!signatureBytes) return {ok: false, reason: 'the signature is not base58'}
  if (!verifySignature(signatureBytes, Buffer.from(message, 'utf8'), scope.poster)) {
    return {ok: false, reason: "the signature is not the job poster's over the message"}
  }
  if (time !== undefined) {
    const age = ageOf(time, scope.nowMs)
    if (age === null) return {ok: false, reason: 'the time part is not a time in unix milliseconds'}
    if (age >= scope.timePartExpirySeconds * 1000) return {ok: false, reason: 'the header has expired'}
  }
  if (message === NETWORK_CLI_MESSAGE) {
    const form = NETWORK_CLI_ROUTES[scope.route]
    if (!form) return {ok: false, reason: `the network CLI's message does not open ${scope.route}`}
    if (form === 'timed' && time === undefined) return {ok: false, reason: `${scope.route} needs a time part`}
    return {ok: true, lasting: time === undefined}
  }
  if (!message.startsWith(`${CLIENT_PREFIX} `)) {
    return {ok: false, reason: "the signed message is neither gpunet's nor the network CLI's"}
  }
  const [, action, node, job, at] = CLIENT_MESSAGE.exec(message) ?? []
  if (at === undefined) return {ok: false, reason: "the signed message is not in gpunet's form"}
  if (action !== ROUTE_ACTIONS[scope.route]) {
    return {ok: false, reason: `the header was signed for ${action}, not ${ROUTE_ACTIONS[scope.route]}`}
  }
  if (node !== scope.node || job !== scope.job) {
    return {ok: false, reason: 'the header was signed for another node or job'}
  }
  const age = ageOf(at, scope.nowMs)
  if (age === null) return {ok: false, reason: 'the signed message has no time'}
  const expirySeconds = Math.min(scope.timeoutSeconds, CLIENT_HEADER_EXPIRY_S)
  if (age >= expirySeconds * 1000) return {ok: false, reason: `the header is older than ${expirySeconds} s`}
  return {ok: true, lasting: false}
}

/** Milliseconds since `text` (unix ms); null when it is no time or lies too far ahead. */
function ageOf(text: string, nowMs: number): number | null {
  if (!/^\d{1,16}$/.test(text)) return null
  const age = nowMs - Number(text)
  return age < -MAX_CLOCK_SKEW_MS ? null : age
}

/**
 * Where a node's API answers: a template with `{node}` (the nodeApiUrl setting), else under the node's own name at a
 * localnet's gateway (`http://<node>.node.localhost:<port>`), else `https://<node>.node.<host>`.
 */
export function nodeApiUrl(
  node: string,
  where: {template?: string | null; gatewayUrl?: string | null; networkHost?: string | null},
): string | null {
  const template = where.template || (where.gatewayUrl ? where.gatewayUrl.replace('//', '//{node}.') : null)
  if (template) return template.replaceAll('{node}', node).replace(/\/+$/, '')
  return where.networkHost ? `https://${node}.node.${where.networkHost}` : null
}

/** The WebSocket URL of an API base URL (`http` → `ws`, `https` → `wss`). */
export function socketUrl(apiUrl: string): string {
  return apiUrl.replace(/^http/, 'ws')
}
