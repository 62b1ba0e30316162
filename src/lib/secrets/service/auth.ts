import bs58 from 'bs58'
import {errors as joseErrors, jwtVerify, SignJWT} from 'jose'
import {randomUUID} from 'node:crypto'

import {findSecretReferences} from '../../definition/secret-refs.js'
import {verifySignature} from '../../ed25519.js'
import {badRequest, HttpError} from './http-error.js'

/** A job as the chain shows it, in the terms job-scoped login needs. */
export interface JobRecord {
  /** The node that claimed the job, or null while nobody has. */
  node: string | null
  poster: string
  /** Unix seconds at which the job's paid time ends. */
  endsAt: number
  running: boolean
}

/** The chain and the job definitions, as seen by the service; the localnet and the real networks supply it. */
export interface JobAuthority {
  getJob(job: string): Promise<JobRecord | null>
  getDefinition(job: string): Promise<unknown>
}

/** What a token lets its bearer do: all of its owner's secrets, or reading some of a job poster's secrets. */
export type TokenScope = {kind: 'owner'; owner: string} | {kind: 'job'; job: string; poster: string; names: string[]}

/** The parameters of POST /login after validation. */
export interface LoginRequest {
  address: string
  signature: string
  timestamp: number
  job?: string
}

const ALGORITHM = 'HS256'
const ISSUER = 'gpunet-secrets'

/** The text a wallet signs to log in. */
export function loginMessage(timestamp: number): string {
  return `service_secret_${timestamp}`
}

/** Validates the shapes of the login parameters (base58 keys and signature, integer timestamp). */
export function parseLogin(params: Record<string, unknown>): LoginRequest {
  const address = base58Param(params, 'address', 32, true) as string
  const signature = base58Param(params, 'signature', 64, true) as string
  const job = base58Param(params, 'job', 32, false)
  const raw = params.timestamp
  const timestamp =
    typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(timestamp))
    throw badRequest('invalid_timestamp', 'timestamp must be an integer (unix seconds)')
  return {address, signature, timestamp, ...(job ? {job} : {})}
}

function base58Param(
  params: Record<string, unknown>,
  name: string,
  bytes: number,
  required: boolean,
): string | undefined {
  const value = params[name]
  if (value === undefined || value === '') {
    if (required) throw badRequest('missing_parameter', `${name} is required`)
    return undefined
  }
  const decoded = typeof value === 'string' && value.length <= 100 ? bs58.decodeUnsafe(value) : undefined
  if (!decoded || decoded.length !== bytes) {
    throw badRequest(`invalid_${name}`, `${name} must be ${bytes} bytes in base58`)
  }
  return value as string
}

/**
 * Checks that `signature` is the ed25519 signature of `service_secret_<timestamp>` by `address`, and that the
 * timestamp is within `skewSeconds` of `now`. Non-canonical signatures are refused (see ed25519.ts), so
 * remembering used signatures is enough to refuse replays.
 */
export function verifyLoginSignature(login: LoginRequest, now: number, skewSeconds: number): void {
  if (Math.abs(now - login.timestamp) > skewSeconds) {
    throw new HttpError(
      401,
      'stale_timestamp',
      `the signed timestamp is more than ${skewSeconds} seconds from the server's clock`,
    )
  }
  const message = new TextEncoder().encode(loginMessage(login.timestamp))
  const valid = verifySignature(bs58.decode(login.signature), message, bs58.decode(login.address))
  if (!valid)
    throw new HttpError(
      401,
      'invalid_signature',
      `the signature is not ${loginMessage(login.timestamp)} signed by ${login.address}`,
    )
}

/**
 * The scope and end of a job token: only for the node that runs the job, until the job ends, for the names the
 * job's definition refers to.
 */
export async function jobScope(
  authority: JobAuthority | undefined,
  node: string,
  job: string,
  now: number,
): Promise<{scope: TokenScope; endsAt: number}> {
  if (!authority) {
    throw new HttpError(
      503,
      'job_login_unavailable',
      'this service is not connected to a chain, so it cannot issue job tokens',
    )
  }
  const record = await unavailableOnFailure(() => authority.getJob(job))
  if (!record) throw new HttpError(403, 'unknown_job', `no job ${job} exists`)
  if (record.node !== node) throw new HttpError(403, 'not_job_node', `${node} is not the node running job ${job}`)
  if (!record.running || record.endsAt <= now) throw new HttpError(403, 'job_not_running', `job ${job} is not running`)
  // Fetched only for a login that passed the checks: the definition may come from a slower content store.
  const definition = await unavailableOnFailure(() => authority.getDefinition(job))
  return {
    scope: {kind: 'job', job, poster: record.poster, names: findSecretReferences(definition)},
    endsAt: record.endsAt,
  }
}

async function unavailableOnFailure<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch {
    throw new HttpError(503, 'chain_unavailable', 'the chain or the job definition could not be read; try again')
  }
}

/** Issues and checks login tokens: HS256 pinned both ways, so neither `alg: none` nor another algorithm passes. */
export class TokenIssuer {
  constructor(private readonly key: Uint8Array) {}

  /** A signed JWT for `subject` with `scope`, expiring at `expiresAt` (unix s). */
  async issue(subject: string, scope: TokenScope, expiresAt: number): Promise<string> {
    const claims =
      scope.kind === 'owner'
        ? {scope: 'owner'}
        : {scope: 'job', job: scope.job, poster: scope.poster, names: scope.names}
    return new SignJWT(claims)
      .setProtectedHeader({alg: ALGORITHM, typ: 'JWT'})
      .setSubject(subject)
      .setIssuer(ISSUER)
      .setAudience(ISSUER)
      .setIssuedAt()
      .setJti(randomUUID())
      .setExpirationTime(expiresAt)
      .sign(this.key)
  }

  /** The scope of a valid token; 401 for a missing, malformed, tampered or expired one. */
  async verify(authorization: string | undefined): Promise<TokenScope> {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')
    if (!match)
      throw new HttpError(401, 'missing_token', 'send "Authorization: Bearer <token>"; get a token with POST /login')
    try {
      const {payload} = await jwtVerify(match[1] as string, this.key, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        audience: ISSUER,
      })
      const subject = payload.sub as string
      if (payload.scope === 'owner') return {kind: 'owner', owner: subject}
      const names = payload.names
      if (
        payload.scope === 'job' &&
        typeof payload.job === 'string' &&
        typeof payload.poster === 'string' &&
        Array.isArray(names)
      ) {
        return {kind: 'job', job: payload.job, poster: payload.poster, names: names.map(String)}
      }
      throw new HttpError(401, 'invalid_token', 'the token has no valid scope')
    } catch (error) {
      if (error instanceof HttpError) throw error
      if (error instanceof joseErrors.JWTExpired)
        throw new HttpError(401, 'token_expired', 'the token has expired; log in again')
      throw new HttpError(401, 'invalid_token', 'the token is not valid')
    }
  }
}
