/**
 * The one HTTP client of gpunet: undici with pooled agents, connect/headers/body timeouts, retries with backoff for
 * idempotent requests, and HTTP(S)_PROXY / NO_PROXY honoured. Every outgoing HTTP call goes through `httpFetch`.
 */
import {STATUS_CODES} from 'node:http'
import type {LookupFunction} from 'node:net'

// First: it must run before `undici` below is evaluated (see the module's comment).
import './builtin-fetch-first.js'
import {Agent, type Dispatcher, EnvHttpProxyAgent, interceptors, fetch as undiciFetch} from 'undici'
import type {RequestInit, Response} from 'undici'

export type {RequestInit, Response} from 'undici'

/** How long a connection may take to open, to send its response headers, and to go quiet mid-body. */
export interface HttpTimeouts {
  connectMs: number
  headersMs: number
  /** Between two chunks of a body, not for the whole body: a large download may take as long as it keeps flowing. */
  bodyMs: number
}

/** How often and how patiently an idempotent request is sent again after a network error, a 429 or a 5xx. */
export interface HttpRetry {
  maxRetries: number
  /** The first wait; each later one doubles, up to `maxDelayMs`. A Retry-After answer sets the wait instead. */
  minDelayMs: number
  maxDelayMs: number
}

/** The settings every process starts with. */
export const HTTP_DEFAULTS: {readonly timeouts: HttpTimeouts; readonly retry: HttpRetry} = {
  timeouts: {connectMs: 10_000, headersMs: 60_000, bodyMs: 300_000},
  retry: {maxRetries: 3, minDelayMs: 250, maxDelayMs: 8000},
}

let timeouts: HttpTimeouts = {...HTTP_DEFAULTS.timeouts}
let retry: HttpRetry = {...HTTP_DEFAULTS.retry}
let proxied: Dispatcher | undefined
let direct: Dispatcher | undefined

function agentOptions() {
  return {
    connect: {timeout: timeouts.connectMs},
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
  }
}

// undici's retry interceptor sends again only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE), so a
// POST is never sent twice. `throwOnError: false` hands the last 429/5xx answer to the caller once the retries are
// spent, so it can say what the service answered instead of a bare "fetch failed".
function withRetries(agent: Dispatcher): Dispatcher {
  return agent.compose(
    interceptors.retry({
      maxRetries: retry.maxRetries,
      minTimeout: retry.minDelayMs,
      maxTimeout: retry.maxDelayMs,
      timeoutFactor: 2,
      throwOnError: false,
    }),
  )
}

/**
 * True for loopback hosts, which are never sent through a proxy (the localnet and its gateway live there): every
 * spelling of one, `localhost` and `*.localhost` with or without the final dot, 127.0.0.0/8, `::1`, their
 * IPv4-mapped forms (`::ffff:127.0.0.1`) and the unspecified addresses `0.0.0.0` and `::`, which reach this
 * machine (`serve --host 0.0.0.0` prints them).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  const v4 = host.replace(/^(?:0{0,4}:){0,5}(?:0{0,4}:)?ffff:/, '')
  if (/^(?:127(?:\.\d{1,3}){3}|0\.0\.0\.0)$/.test(v4)) return true
  // undici writes IPv4-mapped addresses in hex (`::ffff:7f00:1`); 0x7f.. is 127.0.0.0/8.
  if (/^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host)) return true
  return /^(?:0{0,4}:){2,7}0{0,3}[01]?$/.test(host)
}

/**
 * Resolves every `*.localhost` name to the loopback address, as browsers do (RFC 6761), so job services at
 * `http://<job>.node.localhost:<port>/` answer here too; the system resolver often knows only `localhost`.
 */
export const loopbackLookup: LookupFunction = (hostname, options, callback) => {
  const address =
    hostname.replace(/^\[|\]$/g, '') === '::1' ? {address: '::1', family: 6} : {address: '127.0.0.1', family: 4}
  if ((options as {all?: boolean}).all) (callback as (e: null, a: (typeof address)[]) => void)(null, [address])
  else callback(null, address.address, address.family)
}

/** The pooled dispatcher for a URL: direct for loopback, otherwise through the proxy the environment names. */
export function httpDispatcher(url: string | URL): Dispatcher {
  const {hostname} = typeof url === 'string' ? new URL(url) : url
  if (isLoopbackHost(hostname)) {
    const options = agentOptions()
    direct ??= withRetries(new Agent({...options, connect: {...options.connect, lookup: loopbackLookup}}))
    return direct
  }
  // EnvHttpProxyAgent reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY (either case) when it is made. Plain HTTP goes to
  // the proxy as an absolute-URL request, as curl sends it: many proxies open CONNECT tunnels to port 443 only.
  proxied ??= withRetries(new EnvHttpProxyAgent({...agentOptions(), proxyTunnel: false}))
  return proxied
}

/** `fetch` through the shared pooled agents. */
export function httpFetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
  return undiciFetch(url, {...init, dispatcher: httpDispatcher(url)})
}

/**
 * The body of `response`, or 'too_large' once it passes `maxBytes` (by its Content-Length, before reading any, or
 * while it streams): the one bounded reader of a stranger's answer. The stream is cancelled either way, which
 * closes the connection, so nothing past the bound is read. A stalled or aborted body rejects as fetch does.
 */
export async function readBodyAtMost(response: Response, maxBytes: number): Promise<Uint8Array | 'too_large'> {
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    return 'too_large'
  }
  const chunks: Uint8Array[] = []
  let size = 0
  // Leaving the loop early cancels the stream.
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength
    if (size > maxBytes) return 'too_large'
    chunks.push(chunk)
  }
  return new Uint8Array(Buffer.concat(chunks, size))
}

/** A whole answer read as text: what a JSON-RPC client needs of a response, in fetch's names. */
export interface TextResponse {
  status: number
  ok: boolean
  statusText: string
  headers: {get(name: string): string | null}
  text(): Promise<string>
}

/**
 * Sends one request through the same pooled agents, timeouts, proxies and retry policy as `httpFetch`, and reads
 * the whole answer as text. It skips fetch's WHATWG objects (a Request, Headers and streams for every call), which
 * cost a short-lived command several milliseconds a call: the Solana JSON-RPC client sends its small POSTs this way.
 */
export async function httpText(
  url: string | URL,
  init: {method: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal},
): Promise<TextResponse> {
  const response = await request(url, init)
  const text = await response.body.text()
  const status = response.statusCode
  return {
    status,
    ok: status >= 200 && status < 300,
    statusText: STATUS_CODES[status] ?? '',
    headers: {
      get(name) {
        const value = response.headers[name.toLowerCase()]
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
      },
    },
    text: async () => text,
  }
}

/**
 * Sends one request and resolves its status and headers, the body read and dropped: a readiness probe. It is sent
 * once (the caller probes again on its own schedule) and may carry a body on any method, which `fetch` refuses on GET.
 */
export async function httpProbe(
  url: string | URL,
  options: {method: string; headers?: Record<string, string>; body?: string; timeoutMs: number},
): Promise<{status: number; headers: Record<string, string | string[] | undefined>}> {
  const response = await request(
    url,
    {...options, signal: AbortSignal.timeout(options.timeoutMs)},
    {retryOptions: {maxRetries: 0}},
  )
  await response.body.dump()
  return {status: response.statusCode, headers: response.headers}
}

/** One request through the shared agents, in the form undici's request API takes (origin and path apart). */
function request(
  url: string | URL,
  init: {method: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal},
  extra: Record<string, unknown> = {},
): Promise<Dispatcher.ResponseData> {
  const {origin, pathname, search} = typeof url === 'string' ? new URL(url) : url
  return httpDispatcher(url).request({
    origin,
    path: `${pathname}${search}`,
    method: init.method as Dispatcher.HttpMethod,
    headers: init.headers,
    body: init.body,
    signal: init.signal,
    ...extra,
  } as Dispatcher.RequestOptions)
}

/**
 * Why a request failed, in words for an error message: a timeout names the limit that ran out, a network error its
 * code (ECONNREFUSED, ENOTFOUND...). `httpFetch` rejects with a TypeError whose `cause` holds the real error.
 */
export function describeHttpFailure(error: unknown): string {
  const cause = (error as {cause?: unknown}).cause ?? error
  const {code, message, name} = (cause ?? {}) as {code?: unknown; message?: unknown; name?: unknown}
  if (name === 'TimeoutError' || name === 'AbortError') return String(message ?? 'aborted')
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `no connection within ${seconds(timeouts.connectMs)}`
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `no answer within ${seconds(timeouts.headersMs)}`
    case 'UND_ERR_BODY_TIMEOUT':
      return `the answer stalled for ${seconds(timeouts.bodyMs)}`
    default:
      return typeof code === 'string' ? code : typeof message === 'string' ? message : String(cause)
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}

/**
 * Changes the timeouts or the retry policy of the requests that follow (tests use short ones; a library user on a
 * slow link may want longer ones) and closes the pooled connections. With no argument, back to the defaults.
 */
export async function configureHttp(options: {timeouts?: Partial<HttpTimeouts>; retry?: Partial<HttpRetry>} = {}) {
  await closeHttpAgents()
  timeouts = {...HTTP_DEFAULTS.timeouts, ...options.timeouts}
  retry = {...HTTP_DEFAULTS.retry, ...options.retry}
}

/**
 * Closes the pooled connections; the next request opens new ones and reads the proxy variables again. A CLI
 * process need not call it: idle pooled sockets do not keep Node running.
 */
export async function closeHttpAgents(): Promise<void> {
  const agents = [proxied, direct]
  proxied = undefined
  direct = undefined
  await Promise.all(agents.map((agent) => agent?.close()))
}
