import {connect} from 'node:net'
import {setTimeout as sleep} from 'node:timers/promises'

import WebSocket from 'ws'

import type {HealthCheck} from '../definition/schema.js'
import {describeHttpFailure, httpProbe, isLoopbackHost, loopbackLookup} from '../http/client.js'
import {gatewayAnswer} from './gateway-answer.js'

type HttpCheck = Extract<HealthCheck, {type: 'http'}>
type WebsocketCheck = Extract<HealthCheck, {type: 'websocket'}>

/** The outcome of one health check: passed or not, and what was seen (never a response body). */
export interface CheckOutcome {
  ok: boolean
  detail: string
}

/** How long one check may take before it counts as failed. */
const CHECK_TIMEOUT_MS = 5000

/** Sends the check's request to `baseUrl` and passes when the answer has the expected status. */
export async function checkHttp(
  baseUrl: string,
  check: HttpCheck,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<CheckOutcome> {
  const url = new URL(check.path, baseUrl)
  const headers: Record<string, string> = {...check.headers}
  const hasBody = check.body !== undefined && check.body !== null
  const body = typeof check.body === 'string' ? check.body : hasBody ? JSON.stringify(check.body) : undefined
  const named = (h: string) => Object.keys(headers).some((k) => k.toLowerCase() === h)
  if (hasBody && typeof check.body !== 'string' && !named('content-type')) headers['content-type'] = 'application/json'
  const what = `${check.method} ${url.pathname}${url.search}`
  try {
    const answer = await httpProbe(url, {method: check.method, headers, body, timeoutMs})
    const gateway = gatewayAnswer(answer.headers)
    // Through the localnet's gateway, its own page is never the service's answer, whatever its status.
    if (gateway) return {ok: false, detail: `${what}: the gateway answered ${answer.status} (${gateway})`}
    return {ok: answer.status === check.expected_status, detail: `${what} answered ${answer.status}`}
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError'
    return {ok: false, detail: `${what}: ${timedOut ? `no answer within ${timeoutMs} ms` : describeHttpFailure(error)}`}
  }
}

/** Opens a websocket to `url` and passes when its first message is exactly the expected response. */
export function checkWebsocket(
  url: string,
  check: WebsocketCheck,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<CheckOutcome> {
  return new Promise((resolve) => {
    // `*.localhost` (a job's URL on the localnet gateway) resolves to the loopback address, as for HTTP.
    const loopback = isLoopbackHost(new URL(url).hostname) ? {lookup: loopbackLookup} : {}
    const socket = new WebSocket(url, {handshakeTimeout: timeoutMs, ...loopback})
    const done = (outcome: CheckOutcome) => {
      clearTimeout(timer)
      socket.removeAllListeners()
      socket.on('error', () => {})
      socket.terminate()
      resolve(outcome)
    }
    const timer = setTimeout(() => done({ok: false, detail: `no message within ${timeoutMs} ms`}), timeoutMs)
    socket.on('message', (data: WebSocket.RawData) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)
      const text = bytes.toString('utf8')
      const ok = text === check.expected_response
      done({ok, detail: ok ? 'answered the expected response' : 'answered something else'})
    })
    socket.on('error', (error) => done({ok: false, detail: reason(error)}))
    socket.on('close', (code) => done({ok: false, detail: `closed (${code}) before any message`}))
  })
}

/** Passes when a TCP connection to `host:port` opens: readiness of a port that has no health checks. */
export function checkTcp(host: string, port: number, timeoutMs = CHECK_TIMEOUT_MS): Promise<CheckOutcome> {
  return new Promise((resolve) => {
    const socket = connect({host, port, timeout: timeoutMs})
    const done = (outcome: CheckOutcome) => {
      socket.destroy()
      resolve(outcome)
    }
    socket.on('connect', () => done({ok: true, detail: 'accepts connections'}))
    socket.on('timeout', () => done({ok: false, detail: `no connection within ${timeoutMs} ms`}))
    socket.on('error', (error) => done({ok: false, detail: reason(error)}))
  })
}

/** A port to watch: where it is published and the checks that decide it is ready. */
export interface ReadinessTarget {
  host: string
  hostPort: number
  health_checks: HealthCheck[]
}

/** Whether a port turned ready, after how many rounds, and the last failure seen when it did not. */
export interface Readiness {
  ready: boolean
  attempts: number
  detail: string
}

/** How often a node re-runs an up port's continuous health checks: the network's nodes' 30 s (the localnet's too). */
export const DEFAULT_CONTINUOUS_INTERVAL_MS = 30_000

/** Heavy inference containers take up to 20 minutes before they answer (spec, "Limits"). */
export const DEFAULT_READY_TIMEOUT_MS = 20 * 60 * 1000

/**
 * Runs the target's checks every `intervalMs` until all of them pass in one round (ready), `timeoutMs` has
 * passed or `signal` aborts (not ready). A port without checks is ready once it accepts TCP connections.
 */
export async function waitUntilReady(
  target: ReadinessTarget,
  options: {timeoutMs?: number; intervalMs?: number; signal?: AbortSignal} = {},
): Promise<Readiness> {
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_READY_TIMEOUT_MS)
  const intervalMs = options.intervalMs ?? 1000
  for (let attempts = 1; ; attempts++) {
    const outcomes = await runChecks(target)
    const failed = outcomes.find((o) => !o.ok)
    if (!failed) return {ready: true, attempts, detail: outcomes.map((o) => o.detail).join('; ')}
    if (options.signal?.aborted) return {ready: false, attempts, detail: `stopped waiting: ${failed.detail}`}
    if (Date.now() + intervalMs > deadline) return {ready: false, attempts, detail: `timed out: ${failed.detail}`}
    await sleep(intervalMs, undefined, {signal: options.signal}).catch(() => undefined)
  }
}

/** Runs the target's checks once, side by side (a TCP connection when it has none). */
export function runChecks({host, hostPort, health_checks: checks}: ReadinessTarget): Promise<CheckOutcome[]> {
  if (checks.length === 0) return Promise.all([checkTcp(host, hostPort)])
  return Promise.all(
    checks.map((check) =>
      check.type === 'http'
        ? checkHttp(`http://${host}:${hostPort}/`, check)
        : checkWebsocket(`ws://${host}:${hostPort}/`, check),
    ),
  )
}

function reason(error: Error): string {
  return (error as NodeJS.ErrnoException).code ?? error.message
}
