/**
 * The network's `/terminal` route of the node API socket (node.openapi.json, `x-websocket`), shared by `job shell`
 * and the localnet's node: a shell in a job's operation, opened with a grant the poster signs.
 *
 * - First frame: `{path: "/terminal", body: {jobAddress, message, signature, op?, cols?, rows?}}`, `message` the
 *   grant text below, `signature` base64 of the raw 64-byte ed25519 signature over it.
 * - Client → node: `{"type":"stdin","data":"<text>"}`, `{"type":"resize","cols":N,"rows":N}`.
 * - Node → client: binary frames of terminal output; `{"type":"exit","code":N|null}`; `{"type":"error","message"}`.
 */
import {verifySignature} from '../keys/ed25519.js'

export const TERMINAL_PATH = '/terminal'
export const TERMINAL_GRANT_HEADER = 'Nosana Terminal Authorization v1'
export const TERMINAL_AUDIENCE = 'nosana-web-terminal'
/** The nodes refuse a grant that expires further ahead than this. */
export const TERMINAL_GRANT_MAX_TTL_MS = 5 * 60 * 1000
/** gpunet's grants expire sooner, leaving room for clock skew (as the network's web client does). */
export const TERMINAL_GRANT_TTL_MS = 4 * 60 * 1000

/** The first frame's body. */
export interface TerminalBody {
  jobAddress: string
  message: string
  signature: string
  op?: string
  cols?: number
  rows?: number
}

/** What a grant names. */
export interface TerminalGrant {
  job: string
  node: string
  /** ISO 8601 UTC. */
  expiresAt: string
  op?: string
  network?: string
}

/** An operation id goes into the signed text, so it must stay one plain token. */
export function safeTerminalOp(op: string): boolean {
  return /^[A-Za-z0-9._:-]{1,128}$/.test(op)
}

/** The exact text the poster signs; the order of its lines is part of the contract. */
export function terminalGrantText(grant: TerminalGrant): string {
  return [
    TERMINAL_GRANT_HEADER,
    '',
    `job: ${grant.job}`,
    `node: ${grant.node}`,
    `expiresAt: ${grant.expiresAt}`,
    ...(grant.op === undefined ? [] : [`op: ${grant.op}`]),
    ...(grant.network === undefined ? [] : [`network: ${grant.network}`]),
    `audience: ${TERMINAL_AUDIENCE}`,
  ].join('\n')
}

/** Signs a grant for `job` on `node`, valid TERMINAL_GRANT_TTL_MS: the message and its base64 signature. */
export function signTerminalGrant(
  sign: (message: Uint8Array) => Uint8Array,
  scope: {job: string; node: string; op?: string; network: string},
  nowMs = Date.now(),
): {message: string; signature: string} {
  const message = terminalGrantText({...scope, expiresAt: new Date(nowMs + TERMINAL_GRANT_TTL_MS).toISOString()})
  return {message, signature: Buffer.from(sign(Buffer.from(message, 'utf8'))).toString('base64')}
}

/**
 * Checks a grant as a node does: the exact text for this job and node, unexpired and at most five minutes ahead,
 * the operation asked for the one it names (none when it names none), the given network (or none), and the
 * poster's signature over it.
 */
export function checkTerminalGrant(
  body: {message: unknown; signature: unknown; op?: unknown},
  scope: {poster: Uint8Array; job: string; node: string; network: string; nowMs: number},
): {ok: true} | {ok: false; reason: string} {
  const {message, signature} = body
  if (typeof message !== 'string' || message.length > 2048) return {ok: false, reason: 'no grant message'}
  if (typeof signature !== 'string' || !/^[A-Za-z0-9+/]{86}==$/.test(signature))
    return {ok: false, reason: 'the signature is not 64 bytes of base64'}
  const fields = new Map<string, string>()
  const lines = message.split('\n')
  if (lines[0] !== TERMINAL_GRANT_HEADER || lines[1] !== '') return {ok: false, reason: 'not a terminal grant'}
  for (const line of lines.slice(2)) {
    const match = /^([a-zA-Z]+): (\S+)$/.exec(line)
    if (!match || fields.has(match[1]!)) return {ok: false, reason: 'the grant is malformed'}
    fields.set(match[1]!, match[2]!)
  }
  const op = fields.get('op')
  const network = fields.get('network')
  const expiresAt = fields.get('expiresAt') ?? ''
  const expected = terminalGrantText({job: scope.job, node: scope.node, expiresAt, op, network})
  if (message !== expected) return {ok: false, reason: 'the grant is not for this job and node'}
  if (network !== undefined && network !== scope.network) return {ok: false, reason: `the grant is for ${network}`}
  // Both ways: a request that leaves op out would open the job's only running operation, whichever it is.
  if (body.op !== op) {
    return {
      ok: false,
      reason:
        op === undefined
          ? 'the grant names another operation: it names none, so send no op'
          : `the grant names another operation: send op ${op}`,
    }
  }
  const expires = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/.test(expiresAt) ? Date.parse(expiresAt) : Number.NaN
  if (Number.isNaN(expires)) return {ok: false, reason: 'the grant has no expiry time'}
  if (expires <= scope.nowMs) return {ok: false, reason: 'the grant has expired'}
  if (expires > scope.nowMs + TERMINAL_GRANT_MAX_TTL_MS) return {ok: false, reason: 'the grant runs too long'}
  const bytes = Buffer.from(signature, 'base64')
  if (!verifySignature(bytes, Buffer.from(message, 'utf8'), scope.poster))
    return {ok: false, reason: "the signature is not the job poster's over the grant"}
  return {ok: true}
}
