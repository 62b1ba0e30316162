import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'

import {ApiError, badRequest, retryLater} from '../../http/api-error.js'
import {createApiServer} from '../../http/api-server.js'
import {isLoopbackAddress} from '../../http/loopback-guard.js'
import {secretProblem} from '../limits.js'
import {boundLoginPrefix, LOGIN_PREFIXES} from '../login-message.js'
import {
  checkJobStillRuns,
  jobScope,
  type JobAuthority,
  parseLogin,
  TokenIssuer,
  type TokenScope,
  verifyLoginSignature,
} from './auth.js'
import {deriveKey, SecretCipher} from './crypto.js'
import {parseForm, parseJson} from './body.js'
import {type RateLimit, RateLimiter} from './rate-limit.js'
import {type Quota, QuotaError, type SecretStorage, StorageBusyError} from './storage.js'

/** The service's limits; every one has a default, `secrets serve` flags, tests and benchmarks change them. */
export interface ServiceLimits extends Quota {
  /** Largest request body, in bytes (413 above). */
  bodyBytes: number
  /** Lifetime of a token, at most one hour. */
  tokenTtlSeconds: number
  /** How far the signed timestamp may be from the server's clock. */
  clockSkewSeconds: number
  /** Logins with a valid signature, per address. */
  loginPerAddress: RateLimit
  /**
   * Failed logins (malformed, stale, bad signature, replayed), per client IP; successes do not count. From a
   * loopback address they count per claimed address instead (a malformed one, naming nobody, not at all): every
   * local user shares 127.0.0.1, so one local process failing logins must not lock out the others.
   */
  loginFailuresPerIp: RateLimit
  /**
   * Job logins refused because the key does not run the job (each costs chain reads), per address: past it the
   * login answers 429 from the cached job alone, so a node whose claim has landed still gets in.
   */
  jobRefusalsPerAddress: RateLimit
  /**
   * Owners whose first secrets are stored, per client IP: one IP cannot use up the store with throwaway keys, so
   * the total (`totalBytes`) stays a last resort that a new owner elsewhere does not meet. From a loopback address
   * each owner counts for itself instead, as failed logins do: every local user shares 127.0.0.1, so one local
   * process's throwaway owners must not refuse the others' first secrets; the total still bounds them.
   */
  newOwnersPerIp: RateLimit
  /** How long a job login may wait for the chain and the content store in all before it answers 503. */
  jobLoginDeadlineMs: number
}

export const DEFAULT_LIMITS: ServiceLimits = {
  bodyBytes: 1024 * 1024,
  secretsPerOwner: 1000,
  bytesPerOwner: 1024 * 1024,
  totalBytes: 1024 * 1024 * 1024,
  tokenTtlSeconds: 3600,
  clockSkewSeconds: 60,
  loginPerAddress: {limit: 30, windowMs: 60_000},
  loginFailuresPerIp: {limit: 100, windowMs: 60_000},
  jobRefusalsPerAddress: {limit: 10, windowMs: 60_000},
  newOwnersPerIp: {limit: 100, windowMs: 3_600_000},
  jobLoginDeadlineMs: 10_000,
}

export interface SecretsServiceOptions {
  /** Where secrets live; the service owns it and closes it on `close()`. */
  storage: SecretStorage
  /** 32 bytes; every instance sharing a database needs the same one (see `loadMasterKey`). */
  masterKey: Buffer
  /** The chain, for job-scoped logins; without it job logins answer 503. Wrap it in `cachedJobAuthority`. */
  authority?: JobAuthority
  limits?: Partial<ServiceLimits>
  /** Receives one line per request (never a value, a token or a signature). */
  log?: (line: string) => void
  /** Take the client IP from X-Forwarded-For (only behind a proxy you run). */
  trustProxy?: boolean
  /** Browser origins allowed besides the service's own while it listens on loopback (the allowOrigin setting). */
  allowedOrigins?: readonly string[]
  /** The clock, in milliseconds (tests pin it). */
  now?: () => number
  /**
   * Hosts (`name:port`) clients reach the service at, besides the one it listens on: logins may sign the message
   * bound to them (see `boundLoginPrefix`), which /health advertises.
   */
  hosts?: string[]
}

/** A secrets service instance: an HTTP server that is not listening until `listen`. */
export interface SecretsService {
  /** The base URL once listening, e.g. http://127.0.0.1:8787. */
  readonly url: string
  listen(port?: number, host?: string): Promise<string>
  /**
   * Exempts an address from the login limits: the localnet's own node, so that no other local client can lock it
   * out by failing logins from the same 127.0.0.1.
   */
  exemptFromLoginLimits(address: string): void
  close(): Promise<void>
}

/** Builds the secrets service: POST /login, GET/POST/DELETE /secrets and GET /health. */
export function createSecretsService(options: SecretsServiceOptions): SecretsService {
  const limits = {...DEFAULT_LIMITS, ...options.limits}
  limits.tokenTtlSeconds = Math.min(limits.tokenTtlSeconds, 3600)
  const {storage, authority} = options
  const log = options.log ?? (() => {})
  const clock = options.now ?? Date.now
  const seconds = () => Math.floor(clock() / 1000)
  const cipher = new SecretCipher(options.masterKey)
  const tokens = new TokenIssuer(deriveKey(options.masterKey, 'login-tokens'))
  const perAddress = new RateLimiter(limits.loginPerAddress)
  const failuresPerIp = new RateLimiter(limits.loginFailuresPerIp)
  const jobRefusals = new RateLimiter(limits.jobRefusalsPerAddress)
  const newOwnersPerIp = new RateLimiter(limits.newOwnersPerIp)
  const exempt = new Set<string>()
  const subjects = new WeakMap<FastifyRequest, string>()
  const hosts = new Set((options.hosts ?? []).map((host) => host.toLowerCase()))
  let loginPrefixes: readonly string[] = LOGIN_PREFIXES
  const addHost = (host: string) => {
    hosts.add(host.toLowerCase())
    loginPrefixes = [...LOGIN_PREFIXES, ...[...hosts].map(boundLoginPrefix)]
  }
  for (const host of hosts) addHost(host)

  const server = createApiServer({
    bodyLimit: limits.bodyBytes,
    trustProxy: options.trustProxy,
    allowedOrigins: options.allowedOrigins,
    json: parseJson,
    parsers: {'application/x-www-form-urlencoded': parseForm},
    errors: (error) => serviceError(error, limits),
    onServerError: (error) => {
      if (!(error instanceof ApiError)) log(`internal error: ${(error as Error).name}: ${(error as Error).message}`)
    },
  })

  // On the server, not in the routes' plugin: a request no route answers is logged too.
  // Without a log nothing is formatted: a hook costs every request a promise.
  if (options.log) {
    server.app.addHook('onResponse', (request, reply, done) => {
      const path = request.url.split('?')[0]
      const who = subjects.get(request)
      const ms = reply.elapsedTime.toFixed(1)
      log(
        `${new Date(clock()).toISOString()} ${request.ip} ${request.method} ${path} ${reply.statusCode} ${ms}ms${who ? ` ${who}` : ''}`,
      )
      done()
    })
  }

  /** POST /login, GET/POST/DELETE /secrets and GET /health. */
  async function secretsRoutes(app: FastifyInstance): Promise<void> {
    app.get('/health', async () => {
      try {
        await storage.ping()
      } catch {
        throw new ApiError(503, 'storage_unavailable', 'the storage does not answer')
      }
      // The login messages bound to this service: a client that finds its URL's host here signs that one.
      return {status: 'ok', login: {hosts: [...hosts]}}
    })

    app.post('/login', async (request) => {
      const now = seconds()
      const params = bodyParams(request)
      let verified = false
      // Failures from a stranger count against its IP; from this machine, against the address it claims.
      let failureKey: string | null = isLoopbackAddress(request.ip) ? null : request.ip
      try {
        const login = parseLogin(params)
        subjects.set(request, login.address)
        const limited = !exempt.has(login.address)
        failureKey ??= `address:${login.address}`
        // Only failures count, so a client that logs in correctly is never throttled by its IP.
        if (limited) refuseOverLimit(failuresPerIp, failureKey, clock())
        verifyLoginSignature(login, now, limits.clockSkewSeconds, loginPrefixes)
        verified = true
        // Counted after the signature check, so nobody can use up an address's allowance but its key holder.
        if (limited) {
          refuseOverLimit(perAddress, login.address, clock())
          perAddress.hit(login.address, clock())
        }
        // Kept until the timestamp can no longer pass the clock check; after that the check refuses it anyway.
        if (!(await storage.claimSignature(login.signature, login.timestamp, now, limits.clockSkewSeconds + 1))) {
          verified = false
          throw new ApiError(401, 'replayed_signature', 'this signature was already used; sign a new timestamp')
        }
        const expiresAt = now + limits.tokenTtlSeconds
        if (!login.job)
          return {token: tokens.issue(login.address, {kind: 'owner', owner: login.address}, expiresAt, now)}
        const refusedBefore = limited ? jobRefusals.blocked(login.address, clock()) : undefined
        const job = await withinDeadline(
          jobScope(authority, login.address, login.job, now, {reread: refusedBefore === undefined}).catch((error) => {
            if (!limited || !isJobRefusal(error)) throw error
            jobRefusals.hit(login.address, clock())
            if (refusedBefore === undefined) throw error
            throw retryLater(
              429,
              'rate_limited',
              `too many refused job logins; retry in ${refusedBefore} s`,
              refusedBefore,
            )
          }),
          limits.jobLoginDeadlineMs,
        )
        return {token: tokens.issue(login.address, job.scope, Math.min(expiresAt, job.endsAt), now)}
      } catch (error) {
        const status = error instanceof ApiError ? error.status : 500
        // A malformed login from this machine names nobody (and costs no signature check): it is not counted.
        if (!verified && failureKey !== null && (status === 400 || status === 401))
          failuresPerIp.hit(failureKey, clock())
        throw error
      }
    })

    /** The scope of the request's token (a job token only while its job runs), remembered for the request log. */
    async function authorize(request: FastifyRequest): Promise<TokenScope> {
      const now = seconds()
      const scope = await tokens.verify(request.headers.authorization, now)
      subjects.set(request, scope.kind === 'owner' ? scope.owner : `${scope.poster} job=${scope.job}`)
      if (scope.kind === 'job') await checkJobStillRuns(authority, scope, now)
      return scope
    }

    async function ownerOnly(request: FastifyRequest): Promise<string> {
      const scope = await authorize(request)
      if (scope.kind !== 'owner')
        throw new ApiError(
          403,
          'read_only_token',
          'a job token can only read secrets; log in without job to change them',
        )
      return scope.owner
    }

    app.get('/secrets', async (request) => {
      const scope = await authorize(request)
      const owner = scope.kind === 'owner' ? scope.owner : scope.poster
      const sealed = await storage.list(owner, scope.kind === 'job' ? scope.names : undefined)
      // fromEntries defines own properties, so a name such as "__proto__" stays an ordinary key.
      return Object.fromEntries(sealed.map((s) => [s.name, cipher.open(owner, s.name, s.sealed)]))
    })

    app.post('/secrets', async (request, reply) => {
      const owner = await ownerOnly(request)
      const secrets = parseSecrets(bodyParams(request).secrets)
      // Counted when tried, so concurrent first writes from one IP cannot all pass before any is counted; each owner
      // counts once, so an owner's own concurrent first writes do not use up the address's allowance.
      // From this machine the identity is the owner itself, as for failed logins (see ServiceLimits): an owner is one
      // new owner, never past an allowance of one or more, so nothing is counted (a window per throwaway owner would
      // only grow the service's memory).
      const counted = !isLoopbackAddress(request.ip) || limits.newOwnersPerIp.limit < 1
      if (counted && (await storage.list(owner)).length === 0) {
        const retryAfter = newOwnersPerIp.blocked(request.ip, clock())
        if (retryAfter !== undefined)
          throw retryLater(
            429,
            'too_many_new_owners',
            `too many new owners stored secrets from this address; retry in ${retryAfter} s`,
            retryAfter,
          )
        newOwnersPerIp.hitOnce(request.ip, owner, clock())
      }
      await storage.put(
        owner,
        secrets.map(([name, value]) => ({name, sealed: cipher.seal(owner, name, value)})),
        limits,
      )
      return ok(reply)
    })

    app.delete('/secrets', async (request, reply) => {
      const owner = await ownerOnly(request)
      const fromQuery = (request.query as Record<string, unknown>).key
      const fromBody = bodyParams(request).key
      if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
        throw badRequest('conflicting_key', 'key is given in both the query and the body, with different values')
      }
      const key = fromQuery ?? fromBody
      if (typeof key !== 'string' || key === '')
        throw badRequest('missing_parameter', 'key is required (the name of the secret to delete)')
      const problem = secretProblem(key, '')
      if (problem) throw badRequest(problem.code, problem.message)
      if (!(await storage.delete(owner, key))) throw new ApiError(404, 'not_found', `no secret named ${key}`)
      return ok(reply)
    })
  }

  server.app.register(secretsRoutes)
  return {
    get url() {
      return server.url
    },
    async listen(port = 0, host = '127.0.0.1') {
      const url = await server.listen(port, host)
      addHost(new URL(url).host)
      return url
    },
    exemptFromLoginLimits(address) {
      exempt.add(address)
    },
    async close() {
      await server.close()
      await storage.close()
    },
  }
}

/**
 * The answer of `work`, or a 503 with Retry-After once `ms` pass: a slow or trickling chain or content store never
 * holds a login open (the reads themselves end on their own timeouts; their cached results serve the retry).
 */
async function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          retryLater(
            503,
            'chain_unavailable',
            `the chain or the job's definition did not answer within ${ms} ms; try again`,
            5,
          ),
        ),
      ms,
    )
  })
  work.catch(() => {})
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}

function ok(reply: FastifyReply): FastifyReply {
  return reply.type('text/plain; charset=utf-8').send('OK')
}

/** A job login refused because the key does not run the job now: the refusal that costs chain reads. */
function isJobRefusal(error: unknown): boolean {
  return error instanceof ApiError && (error.code === 'not_job_node' || error.code === 'job_not_running')
}

function refuseOverLimit(limiter: RateLimiter, key: string, now: number): void {
  const retryAfter = limiter.blocked(key, now)
  if (retryAfter !== undefined) {
    throw retryLater(429, 'rate_limited', `too many login attempts; retry in ${retryAfter} s`, retryAfter)
  }
}

/** The request parameters from a JSON object or a form body; `{}` without a body. */
function bodyParams(request: FastifyRequest): Record<string, unknown> {
  const body = request.body
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body))
    throw badRequest('invalid_body', 'the body must be a JSON object or a form')
  return body as Record<string, unknown>
}

/** `secrets`: a JSON object of name → value, or its JSON text (as a form field carries it). */
function parseSecrets(raw: unknown): Array<[string, string]> {
  if (raw === undefined) throw badRequest('missing_parameter', 'secrets is required (an object of names to values)')
  let value = raw
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw)
    } catch {
      throw badRequest('invalid_secrets', 'secrets must be a JSON object of names to values')
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest('invalid_secrets', 'secrets must be a JSON object of names to values')
  }
  const entries = Object.entries(value)
  if (entries.length === 0) throw badRequest('invalid_secrets', 'secrets must name at least one secret')
  for (const [name, secret] of entries) {
    const problem = secretProblem(name, secret)
    if (problem) throw badRequest(problem.code, problem.message)
  }
  return entries as Array<[string, string]>
}

const QUOTA_ERRORS: Record<QuotaError['kind'], (limit: number) => ApiError> = {
  secretsPerOwner: (limit) =>
    badRequest('too_many_secrets', `an owner may hold at most ${limit} secrets; delete some first`),
  bytesPerOwner: (limit) =>
    new ApiError(413, 'owner_quota_exceeded', `an owner may store at most ${limit} bytes; delete some secrets first`),
  totalBytes: (limit) =>
    new ApiError(413, 'storage_full', `this service stores at most ${limit} bytes in all, and it is full`),
}

/** The answers of the service's own errors: its quotas, a busy database and its body limit. */
function serviceError(error: unknown, limits: ServiceLimits): ApiError | undefined {
  if (error instanceof QuotaError) return QUOTA_ERRORS[error.kind](error.limit)
  if (error instanceof StorageBusyError)
    return retryLater(503, 'storage_busy', 'the database is busy with other writers; try again', 1)
  if ((error as {code?: unknown}).code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new ApiError(413, 'body_too_large', `the body is larger than ${limits.bodyBytes} bytes`)
  return undefined
}
