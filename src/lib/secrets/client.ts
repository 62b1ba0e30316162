import bs58 from 'bs58'
import {z} from 'zod'

import {ExitCode, type ExitCodeValue, GpunetError, isGpunetError} from '../errors.js'
import {ApiClient, type ApiService, type Refusal, remoteText} from '../http/api-client.js'
import {NETWORK_PRESETS} from '../market/networks.js'
import {boundLoginPrefix, LOGIN_PREFIXES} from './login-message.js'
import type {Wallet} from '../keys/wallet.js'
import type {TokenCache} from './token-cache.js'

export interface SecretsClientOptions {
  /** Base URL of the secrets service. */
  url: string
  wallet: Wallet
  /** A job address: log in as the node running it, to read the poster's secrets the job refers to. */
  job?: string
  /** Where tokens are cached; none (`null`, the default) logs in once per client. */
  cache?: TokenCache | null
  /**
   * Sign the unbound `service_secret_` message for a service that names no host of its own in /health
   * (`--allow-unbound-login`): its signature logs in at any other service of the same owner, so never by default.
   */
  allowUnboundLogin?: boolean
}

const loginAnswer = z.looseObject({token: z.string().min(1).max(10_000)})
const secretsAnswer = z.record(z.string(), z.string())

/** The most bytes of a /health document gpunet reads: one is a few hundred. */
const MAX_HEALTH_BYTES = 64 * 1024

/** Talks to a secrets service: logs in with the wallet's signature when needed and keeps the token cached. */
export class SecretsClient {
  readonly url: string
  private readonly cache: TokenCache | null
  private token: string | undefined
  private prefix: string | undefined
  /** Logins and /health, which carry no token. */
  private readonly open: ApiClient
  /** The secrets routes, with the token: a refused one (expired, or the service's key changed) logs in again once. */
  private readonly api: ApiClient

  constructor(private readonly options: SecretsClientOptions) {
    this.cache = options.cache ?? null
    // A 429 is left to undici (GET, DELETE): a store or a login it refuses is reported with its wait, not waited out.
    const common = {rateLimitRetries: 0, secrets: () => [this.token]}
    this.open = new ApiClient(options.url, SECRETS_SERVICE, common)
    this.api = new ApiClient(options.url, SECRETS_SERVICE, {
      ...common,
      auth: () => this.authorization(),
      renewAuth: () => this.renew(),
    })
    this.url = this.open.url
  }

  /** All readable secrets, name → value (the owner's, or the job's referenced ones). */
  async list(): Promise<Record<string, string>> {
    return this.api.request('GET', '/secrets', undefined, secretsAnswer)
  }

  /** Stores secrets in one request, replacing values of names that exist. */
  async set(secrets: Record<string, string>): Promise<void> {
    await this.api.request('POST', '/secrets', {secrets}, null)
  }

  /** Deletes one secret; a GpunetError with exit code 7 when it does not exist. */
  async delete(name: string): Promise<void> {
    await this.api.request('DELETE', '/secrets', {key: name}, null)
  }

  /**
   * Signs the login message for this service's host (`loginPrefix`) and exchanges it for a token (cached per URL,
   * address and job).
   */
  async login(): Promise<string> {
    const {wallet, job} = this.options
    this.prefix ??= await this.choosePrefix()
    const prefix = this.prefix
    for (let attempt = 0; ; attempt++) {
      const timestamp = Math.floor(Date.now() / 1000)
      const signature = bs58.encode(wallet.sign(new TextEncoder().encode(`${prefix}${timestamp}`)))
      const body = {address: wallet.address, signature, timestamp, ...(job ? {job} : {})}
      let token: string
      try {
        ;({token} = await this.open.request('POST', '/login', body, loginAnswer))
      } catch (error) {
        // Signatures are deterministic: two logins within one second sign the same text, and the second is a replay.
        if (isGpunetError(error) && error.code === 'replayed_signature' && attempt === 0) {
          await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5))
          continue
        }
        throw error
      }
      this.token = token
      await this.cache?.set(this.cacheKey(), token)
      return token
    }
  }

  /**
   * The network's message for the network's own services (`loginPrefix`); else the message bound to this service
   * when its /health document lists the host of our URL (`{"login": {"hosts": ["name:port"]}}`): a signature of it
   * logs in to no other service. The unbound spec message only when the user asked for it (allowUnboundLogin).
   */
  private async choosePrefix(): Promise<string> {
    const prefix = loginPrefix(this.url)
    if (prefix !== SPEC_PREFIX) return prefix
    const host = new URL(this.url).host.toLowerCase()
    // An unreachable service fails here as it would at login (exit 5).
    const health = await this.open.exchange('GET', '/health', undefined, {maxBytes: MAX_HEALTH_BYTES})
    let why = `its /health answered ${health.status}`
    if (health.ok) {
      try {
        const hosts = (JSON.parse(health.text) as {login?: {hosts?: unknown}}).login?.hosts
        if (Array.isArray(hosts) && hosts.includes(host)) return boundLoginPrefix(host)
        why = `its /health does not list ${host} among the hosts it takes logins for`
      } catch {
        // Not a JSON document (another implementation, a proxy's page): no bound message.
        why = 'its /health answered no JSON document'
      }
    }
    if (this.options.allowUnboundLogin) return prefix
    throw unboundLoginRefused(this.url, why)
  }

  private cacheKey(): string {
    return `${this.url} ${this.options.wallet.address}${this.options.job ? ` job=${this.options.job}` : ''}`
  }

  /** The token's header: the one this client holds, else a cached one, else a new login's. */
  private async authorization(): Promise<Record<string, string>> {
    this.token ??= (await this.cache?.get(this.cacheKey())) ?? (await this.login())
    return {authorization: `Bearer ${this.token}`}
  }

  /** After a 401: the refused token forgotten, and a new one from a login. */
  private async renew(): Promise<void> {
    await this.cache?.delete(this.cacheKey())
    await this.login()
  }
}

/** The networks' own secrets services, as `hostname:port`: reached over https only, at the preset's port. */
const NETWORK_SECRETS_SERVICES = new Set(
  Object.values(NETWORK_PRESETS).flatMap((p) => (p.secretsUrl ? [httpsService(p.secretsUrl)] : [])),
)

/** `hostname:port` of an https URL (443 when it names none), without a trailing dot; null for any other scheme. */
function httpsService(url: string): string | null {
  const parsed = new URL(url)
  if (parsed.protocol !== 'https:') return null
  return `${parsed.hostname.toLowerCase().replace(/\.$/, '')}:${parsed.port || '443'}`
}

/**
 * The login message's prefix for a service: the network's `nosana_secret_` only for the network's own services,
 * over https at their port, since they keep no record of used signatures and that message names no service, so a
 * signature sent anywhere else (or readable on the way, over plain http) could be replayed there; the spec's
 * `service_secret_` everywhere else (docs/secrets.md).
 */
export function loginPrefix(url: string): string {
  const service = httpsService(url)
  return service !== null && NETWORK_SECRETS_SERVICES.has(service) ? NETWORK_PREFIX : SPEC_PREFIX
}

/** The error for a service that offers no bound login message, when the user did not allow the unbound one. */
function unboundLoginRefused(url: string, why: string): GpunetError {
  return new GpunetError(
    'unbound_login_refused',
    `not logging in to the secrets service at ${url}: ${why}, so it offers no login message bound to it, and a ` +
      'signature of the unbound `service_secret_<time>` message would log in as you at any other secrets service ' +
      'that takes it, for as long as that time is accepted',
    {
      exitCode: ExitCode.DENIED,
      hint:
        'if you trust this service and no other one could be handed the signature, pass --allow-unbound-login; ' +
        '`gpunet secrets serve` advertises the host it listens on and needs no such flag',
      fields: {url},
    },
  )
}

const [SPEC_PREFIX, NETWORK_PREFIX] = LOGIN_PREFIXES

/** A secrets service as the core's errors name it. */
const SECRETS_SERVICE: ApiService = {
  name: 'the secrets service',
  short: 'the service',
  code: 'secrets',
  unreachableHint: 'check the URL (--secrets-url or GPUNET_SECRETS_URL) and that the service is running',
  invalidHint: 'is the URL a secrets service (gpunet secrets serve, or the network\u2019s)? check --secrets-url',
  refused: serviceError,
}

/** The service's `{"error":{code,message}}` as a GpunetError with the exit code that fits its status. */
function serviceError({status, text, headers, url}: Refusal): GpunetError {
  let code = 'secrets_service_error'
  let message = `the secrets service answered ${status}`
  try {
    const body = JSON.parse(text) as {error?: {code?: unknown; message?: unknown}}
    if (typeof body.error?.code === 'string') code = body.error.code
    if (typeof body.error?.message === 'string') message = remoteText(body.error.message)
  } catch {
    // Not our service's error shape (a proxy page, say): keep the status line.
  }
  const exitCode: ExitCodeValue =
    status === 404
      ? ExitCode.NOT_FOUND
      : status === 401 || status === 403
        ? ExitCode.DENIED
        : status === 400 || status === 413
          ? ExitCode.INVALID_INPUT
          : ExitCode.UNAVAILABLE
  const retry = headers.get('retry-after')
  const hint =
    status === 429
      ? `wait ${retry ?? 'a minute'} s and try again`
      : status >= 500
        ? `the service at ${url} is failing; try again later`
        : status === 401
          ? 'check that the wallet and the service are the ones you meant; the login was refused'
          : status === 404
            ? 'list your secrets with: gpunet secrets get'
            : undefined
  return new GpunetError(code, message, {exitCode, hint})
}
