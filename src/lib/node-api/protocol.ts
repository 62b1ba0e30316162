/**
 * The node API's wire format (reference/network-job-plane.md §4), shared by gpunet's client and the localnet's
 * node: the authorization header, the WebSocket request and frames of `/flog`, `/log` and `/status`, and where a
 * node's API is reached. One module, so the client and the emulation can never read the protocol two ways.
 */
import bs58 from 'bs58'

import {verifySignature} from '../ed25519.js'

/** The network's nodes refuse a WebSocket header whose time part is this old (the SDK's default expiry). */
export const SOCKET_HEADER_EXPIRY_S = 300

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
const CLIENT_MESSAGE = /^gpunet-node-api node=(\S+) job=(\S+) at=(\S+)$/

/**
 * The message gpunet's client signs: it names the node, the job and the time, so a header read off the wire
 * opens nothing else and expires with the job's timeout. No `:` in it (the header's separator).
 */
export function clientMessage(node: string, job: string, nowMs: number): string {
  return `${CLIENT_PREFIX} node=${node} job=${job} at=${nowMs}`
}

/** The header gpunet's client sends: `<message>:<base58 signature>:<unix ms>`, signed by the job's poster. */
export function signHeader(
  sign: (message: Uint8Array) => Uint8Array,
  scope: {node: string; job: string},
  nowMs = Date.now(),
): string {
  const message = clientMessage(scope.node, scope.job, nowMs)
  return `${message}:${bs58.encode(sign(Buffer.from(message, 'utf8')))}:${nowMs}`
}

/** What a node checks a header against. */
export interface HeaderScope {
  /** The job's poster (`job.project`): the only key whose signature opens the job. */
  poster: Uint8Array
  node: string
  job: string
  /** The job's timeout in seconds: a gpunet header, and a REST header's time part, expire with it. */
  timeoutSeconds: number
  /** How long a time part is good for: the job's timeout for REST calls, SOCKET_HEADER_EXPIRY_S on the socket. */
  timePartExpirySeconds: number
  nowMs: number
}

export type HeaderVerdict = {ok: true; lasting: boolean} | {ok: false; reason: string}

/**
 * Checks an authorization header as the network's nodes do (the poster's signature over the message; a time part
 * expires), and more: a gpunet message must name this node and job and be younger than the job's timeout, and no
 * time may lie in the future beyond MAX_CLOCK_SKEW_MS. A header over any other message without a time part (the
 * network's CLI sends one) is accepted as the network accepts it: `lasting`, good for as long as the job runs.
 */
export function checkHeader(header: unknown, scope: HeaderScope): HeaderVerdict {
  if (typeof header !== 'string' || header === '') return {ok: false, reason: 'no authorization header'}
  const parts = header.split(':')
  const [message, signature, time] = parts
  if (parts.length > 3 || !message || !signature) {
    return {ok: false, reason: 'the header is not <message>:<signature>[:<unix ms>]'}
  }
  let signatureBytes: Uint8Array
  try {
    signatureBytes = bs58.decode(signature)
  } catch {
    return {ok: false, reason: 'the signature is not base58'}
  }
  if (!verifySignature(signatureBytes, Buffer.from(message, 'utf8'), scope.poster)) {
    return {ok: false, reason: "the signature is not the job poster's over the message"}
  }
  if (time !== undefined) {
    const age = ageOf(time, scope.nowMs)
    if (age === null) return {ok: false, reason: 'the time part is not a time in unix milliseconds'}
    if (age >= scope.timePartExpirySeconds * 1000) return {ok: false, reason: 'the header has expired'}
  }
  if (!message.startsWith(`${CLIENT_PREFIX} `)) return {ok: true, lasting: time === undefined}
  const [, node, job, at] = CLIENT_MESSAGE.exec(message) ?? []
  if (at === undefined) return {ok: false, reason: "the signed message is not in gpunet's form"}
  if (node !== scope.node || job !== scope.job) {
    return {ok: false, reason: 'the header was signed for another node or job'}
  }
  const age = ageOf(at, scope.nowMs)
  if (age === null) return {ok: false, reason: 'the signed message has no time'}
  if (age >= scope.timeoutSeconds * 1000) return {ok: false, reason: "the header is older than the job's timeout"}
  return {ok: true, lasting: false}
}

/** Milliseconds since `text` (unix ms); null when it is no time or lies too far ahead. */
function ageOf(text: string, nowMs: number): number | null {
  if (!/^\d{1,16}$/.test(text)) return null
  const age = nowMs - Number(text)
  return age < -MAX_CLOCK_SKEW_MS ? null : age
}

/** Where a node's API answers: `https://<node>.node.<host>`, or a template with `{node}` (GPUNET_NODE_API_URL). */
export function nodeApiUrl(
  node: string,
  where: {template?: string | null; networkHost?: string | null},
): string | null {
  if (where.template) return where.template.replaceAll('{node}', node).replace(/\/+$/, '')
  return where.networkHost ? `https://${node}.node.${where.networkHost}` : null
}

/** The WebSocket URL of an API base URL (`http` → `ws`, `https` → `wss`). */
export function socketUrl(apiUrl: string): string {
  return apiUrl.replace(/^http/, 'ws')
}
