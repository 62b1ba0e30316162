/**
 * The one HTTP client of gpunet: undici with pooled agents, connect/headers/body timeouts, retries with backoff for
 * idempotent requests, and HTTP(S)_PROXY / NO_PROXY honoured. Every outgoing HTTP call goes through `httpFetch`.
 */
import type {LookupFunction} from 'node:net'

import {Agent, type Dispatcher, EnvHttpProxyAgent, interceptors, fetch as undiciFetch} from 'undici'
import type {RequestInit, Response} from 'undici'

export type {RequestInit, Response} from 'undici'

/** Timeouts of every connection; a request may still pass a shorter `signal`. */
export const HTTP_TIMEOUTS = {connectMs: 10_000, headersMs: 60_000, bodyMs: 300_000} as const

// undici's retry interceptor retries only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE) on network
// errors and on 429/5xx answers, honouring Retry-After; a POST is never sent twice.
const RETRY = {maxRetries: 3, minTimeout: 250, maxTimeout: 4000, timeoutFactor: 2} as const

let proxied: Dispatcher | undefined
let direct: Dispatcher | undefined

function agentOptions() {
  return {
    connect: {timeout: HTTP_TIMEOUTS.connectMs},
    headersTimeout: HTTP_TIMEOUTS.headersMs,
    bodyTimeout: HTTP_TIMEOUTS.bodyMs,
  }
}

/** True for loopback hosts, which are never sent through a proxy (the localnet and its gateway live there). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)
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
    direct ??= new Agent({...options, connect: {...options.connect, lookup: loopbackLookup}}).compose(
      interceptors.retry(RETRY),
    )
    return direct
  }
  proxied ??= new EnvHttpProxyAgent(agentOptions()).compose(interceptors.retry(RETRY))
  return proxied
}

/** `fetch` through the shared pooled agents. */
export function httpFetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
  return undiciFetch(url, {...init, dispatcher: httpDispatcher(url)})
}

/** Closes the pooled connections (tests and short-lived processes that must not wait for keep-alive sockets). */
export async function closeHttpAgents(): Promise<void> {
  const agents = [proxied, direct]
  proxied = undefined
  direct = undefined
  await Promise.all(agents.map((agent) => agent?.close()))
}
