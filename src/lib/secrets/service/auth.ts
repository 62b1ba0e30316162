import {errors as joseErrors, type JWTPayload, jwtVerify} from 'jose'
import {createHmac, createSecretKey, type KeyObject, randomUUID} from 'node:crypto'

import {decodeBase58} from '../../text/base58-text.js'
import {findSecretReferences} from '../../definition/secret-refs.js'
import {verifySignature} from '../../keys/ed25519.js'
import {isGpunetError} from '../../errors.js'
import {LOGIN_PREFIXES, loginMessage} from '../login-message.js'
import {ApiError, badRequest, retryLater} from '../../http/api-error.js'

/** A run of a job: the node that claimed it and when (unix s). */
export interface JobRun {
  node: string
  time: number
}

/** A job as the chain shows it, in the terms job-scoped login needs. */
export interface JobRecord {
  poster: string
  /** `queued` (waiting, or running when it has a run), `stopped` (may still have runs: claims), `done`. */
  state: 'queued' | 'stopped' | 'done'
  /** Seconds of paid time from the start of a run. */
  timeout: number
  runs: JobRun[]
  /** The CIDv0 of the job's definition in the network's content store. */
  definition: string
}

/**
 * The chain and the content store, as seen by the service. `getJob` answers null for an address that holds no
 * job; both throw (an ApiError 503 naming the setting, ideally) when the chain or the store does not answer.
 */
export interface JobAuthority {
  /** The job; `fresh` asks a caching authority to read it again rather than answer from its cache. */
  getJob(job: string, fresh?: boolean): Promise<JobRecord | null>
  /** The definition stored under `cid`, its bytes checked against the CID. */
  getDefinition(cid: string): Promise<unknown>
}

/** What a token lets its bearer do: all of its owner's secrets, or reading some of a job poster's secrets. */
export type TokenScope =
  {kind: 'owner'; owner: string} | {kind: 'job'; node: string; job: string; poster: string; names: string[]}

/** The parameters of POST /login after validation. */
export interface LoginRequest {
  address: string
  signature: string
  timestamp: number
  job?: string
  /** `address` and `signature` decoded (parsing decodes them anyway). */
  bytes: {address: Uint8Array; signature: Uint8Array}
}

const ALGORITHM = 'HS256'
const ISSUER = 'gpunet-secrets'

/** Validates the shapes of the login parameters (base58 keys and signature, integer timestamp). */
export function parseLogin(params: Record<string, unknown>): LoginRequest {
  const [address, addressBytes] = base58Param(params, 'address', 32, true) as [string, Uint8Array]
  const [signature, signatureBytes] = base58Param(params, 'signature', 64, true) as [string, Uint8Array]
  const [job] = base58Param(params, 'job', 32, false) ?? []
  const raw = params.timestamp
  const timestamp =
    typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(timestamp))
    throw badRequest('invalid_timestamp', 'timestamp must be an integer (unix seconds)')
  return {
    address,
    signature,
    timestamp,
    ...(job ? {job} : {}),
    bytes: {address: addressBytes, signature: signatureBytes},
  }
}

/** The parameter's text and bytes; undefined when it is absent and not required. */
function base58Param(
  params: Record<string, unknown>,
  name: string,
  bytes: number,
  required: boolean,
): [string, Uint8Array] | undefined {
  const value = params[name]
  if (value === undefined || value === '') {
    if (required) throw badRequest('missing_parameter', `${name} is required`)
    return undefined
  }
  const decoded = decodeBase58(value, bytes === 32 ? 'key' : 'signature')
  if (!decoded) throw badRequest(`invalid_${name}`, `${name} must be ${bytes} bytes in base58`)
  return [value as string, decoded]
}

function isBase58(value: unknown, bytes: number): value is string {
  return decodeBase58(value, bytes === 32 ? 'key' : 'signature') !== null
}

/**
 * Checks that `signature` is the ed25519 signature by `address` (strict rules, see ed25519.ts) of one of the
 * accepted messages for `timestamp`, and that the timestamp is at most `skewSeconds` from `now`. Strictness refuses
 * re-encoded signatures, so remembering used signatures (whatever message they signed) is enough to refuse replays.
 */
export function verifyLoginSignature(
  login: LoginRequest,
  now: number,
  skewSeconds: number,
  prefixes: readonly string[] = LOGIN_PREFIXES,
): void {
  if (Math.abs(now - login.timestamp) > skewSeconds) {
    throw new ApiError(
      401,
      'stale_timestamp',
      `the signed timestamp is more than ${skewSeconds} seconds from the server's clock`,
    )
  }
  const encoder = new TextEncoder()
  const valid = prefixes.some((prefix) =>
    verifySignature(login.bytes.signature, encoder.encode(loginMessage(login.timestamp, prefix)), login.bytes.address),
  )
  if (!valid) {
    const messages = prefixes.map((prefix) => loginMessage(login.timestamp, prefix)).join(' or ')
    throw new ApiError(401, 'invalid_signature', `the signature is not ${messages} signed by ${login.address}`)
  }
}

/** The run by which `node` may read the job's secrets at `now`: the job is not done and the run's paid time lasts. */
export function activeRun(record: JobRecord, node: string, now: number): JobRun | undefined {
  if (record.state === 'done') return undefined
  return record.runs.find((run) => run.node === node && run.time + record.timeout > now)
}

/**
 * The scope and end of a job token: only for a node with a run of the job, while the job is not done and the
 * run's paid time lasts, for the names the job's definition refers to.
 */
export async function jobScope(
  authority: JobAuthority | undefined,
  node: string,
  job: string,
  now: number,
  options: {reread?: boolean} = {},
): Promise<{scope: TokenScope; endsAt: number}> {
  if (!authority) {
    throw new ApiError(
      503,
      'job_login_unavailable',
      'this service is not connected to a chain, so it cannot issue job tokens',
    )
  }
  const record = await currentJob(authority, job, (r) => activeRun(r, node, now) !== undefined, options.reread)
  if (!record) throw new ApiError(404, 'unknown_job', `no job ${job} exists on this network`)
  const run = activeRun(record, node, now)
  if (!run) {
    const othersRunIt = record.runs.length > 0 && !record.runs.some((r) => r.node === node)
    if (record.state !== 'done' && othersRunIt)
      throw new ApiError(403, 'not_job_node', `${node} is not the node running job ${job}`)
    throw new ApiError(403, 'job_not_running', `job ${job} is not running on ${node}`)
  }
  // Fetched only for a login that passed the checks: the definition may come from a slower content store.
  const definition = await unavailableOnFailure(() => authority.getDefinition(record.definition))
  return {
    scope: {kind: 'job', node, job, poster: record.poster, names: secretNames(definition)},
    endsAt: run.time + record.timeout,
  }
}

/** The secret names a job's definition refers to; 422 for one nested past the one limit (nesting.ts). */
function secretNames(definition: unknown): string[] {
  try {
    return findSecretReferences(definition)
  } catch (error) {
    if (isGpunetError(error) && error.code === 'too_deep') throw new ApiError(422, 'too_deep', error.message)
    throw error
  }
}

/** Refuses a job token whose job ended (done, its run closed, or its paid time over) since it was issued. */
export async function checkJobStillRuns(
  authority: JobAuthority | undefined,
  scope: Extract<TokenScope, {kind: 'job'}>,
  now: number,
): Promise<void> {
  const runs = (r: JobRecord) => activeRun(r, scope.node, now) !== undefined
  const record = authority ? await currentJob(authority, scope.job, runs) : null
  if (!record || !runs(record))
    throw new ApiError(401, 'job_ended', `job ${scope.job} is no longer running on ${scope.node}`)
}

/**
 * The job from the authority's cache when it passes `accepts`, or when there is none: no such job (or an account
 * of another program) is a definitive refusal, and a few seconds of it cost no RPC read. A job that does not pass
 * is read afresh (unless `reread` is false: a key refused too often), so a cached answer from before the node's
 * claim never refuses the node.
 */
async function currentJob(
  authority: JobAuthority,
  job: string,
  accepts: (record: JobRecord) => boolean,
  reread = true,
): Promise<JobRecord | null> {
  const cached = await unavailableOnFailure(() => authority.getJob(job))
  if (!cached || accepts(cached) || !reread) return cached
  return unavailableOnFailure(() => authority.getJob(job, true))
}

async function unavailableOnFailure<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (error) {
    if (error instanceof ApiError) throw error
    throw retryLater(503, 'chain_unavailable', 'the chain or the job definition could not be read; try again', 5)
  }
}

/** Verified tokens remembered at most, so a client reading again and again skips the HMAC check. */
const VERIFIED_TOKENS_KEPT = 10_000

/** The protected header of every token, encoded once. */
const HEADER = Buffer.from(JSON.stringify({alg: ALGORITHM, typ: 'JWT'})).toString('base64url')

/** Issues and checks login tokens: HS256 pinned both ways, so neither `alg: none` nor another algorithm passes. */
export class TokenIssuer {
  private readonly key: KeyObject
  // Token text → its scope and expiry; only exact strings that passed every check are kept.
  private readonly verified = new Map<string, {scope: TokenScope; exp: number}>()

  constructor(secret: Uint8Array) {
    this.key = createSecretKey(secret)
  }

  /**
   * A signed JWT (RFC 7519, HS256) for `subject` with `scope`, issued at `now` and expiring at `expiresAt` (unix
   * s). Signed with node:crypto's HMAC rather than jose's SignJWT: jose signs through a WebCrypto job, about
   * 60 µs a token against 4 µs here, a sixth of a login's time. Every token is still checked by jose (`verify`).
   */
  issue(subject: string, scope: TokenScope, expiresAt: number, now: number): string {
    const claims = {
      ...(scope.kind === 'owner'
        ? {scope: 'owner'}
        : {scope: 'job', job: scope.job, poster: scope.poster, names: scope.names}),
      sub: subject,
      iss: ISSUER,
      aud: ISSUER,
      iat: now,
      jti: randomUUID(),
      exp: expiresAt,
    }
    const signed = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
    return `${signed}.${createHmac('sha256', this.key).update(signed).digest('base64url')}`
  }

  /** The scope of a valid token; 401 for a missing, malformed, tampered, expired or ill-typed one. */
  async verify(authorization: string | undefined, now: number): Promise<TokenScope> {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')
    if (!match)
      throw new ApiError(401, 'missing_token', 'send "Authorization: Bearer <token>"; get a token with POST /login')
    const token = match[1] as string
    const known = this.verified.get(token)
    if (known) {
      if (known.exp > now) return known.scope
      this.verified.delete(token)
    }
    let payload: JWTPayload
    try {
      ;({payload} = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        audience: ISSUER,
        requiredClaims: ['exp', 'iat', 'sub', 'jti'],
        currentDate: new Date(now * 1000),
      }))
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired)
        throw new ApiError(401, 'token_expired', 'the token has expired; log in again')
      throw new ApiError(401, 'invalid_token', 'the token is not valid')
    }
    const scope = scopeOf(payload)
    if (!scope) throw new ApiError(401, 'invalid_token', 'the token has no valid scope')
    if (this.verified.size >= VERIFIED_TOKENS_KEPT) this.verified.delete(this.verified.keys().next().value as string)
    this.verified.set(token, {scope, exp: payload.exp as number})
    return scope
  }
}

/** The scope a token's claims describe, every claim type-checked; undefined when any is off. */
function scopeOf(payload: JWTPayload): TokenScope | undefined {
  const {sub, scope, job, poster, names} = payload as Record<string, unknown>
  if (!isBase58(sub, 32)) return undefined
  if (scope === 'owner') return {kind: 'owner', owner: sub}
  if (
    scope === 'job' &&
    isBase58(job, 32) &&
    isBase58(poster, 32) &&
    Array.isArray(names) &&
    names.every((n) => typeof n === 'string')
  )
    return {kind: 'job', node: sub, job, poster, names: names as string[]}
  return undefined
}
