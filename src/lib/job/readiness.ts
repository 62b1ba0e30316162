/**
 * Whether a running job's service answers, seen from the poster's side: through its service URL, as a user
 * reaches it. A port with health checks is ready when every check answers as the definition expects; a port
 * without any when its URL stops answering 404 (the page a node serves until the service is up).
 */
import WebSocket from 'ws'

import type {HealthCheck, JobDefinition} from '../definition/schema.js'
import {httpFetch, isLoopbackHost, loopbackLookup} from '../http.js'
import type {ServiceUrl} from '../market/service-url.js'

/** How long one probe may take before it counts as not ready. */
const PROBE_TIMEOUT_MS = 5000

/** Whether every service URL is ready, and what the first one that is not answered. */
export interface ServiceReadiness {
  ready: boolean
  /** E.g. `http://….node.localhost:28980/: GET /api/tags answered 404, 200 expected`. */
  detail: string
}

/** The health checks of each exposed port (the first time a port is exposed wins, as the node decides). */
export function healthChecksByPort(definition: JobDefinition): Map<number, HealthCheck[]> {
  const checks = new Map<number, HealthCheck[]>()
  for (const op of definition.ops) {
    const expose = op.args.expose
    if (expose === undefined) continue
    for (const port of typeof expose === 'number' ? [{port: expose, health_checks: undefined}] : expose) {
      if (!checks.has(port.port)) checks.set(port.port, port.health_checks ?? [])
    }
  }
  return checks
}

/** Probes each service URL once (a URL shared by several ports, as on devnet, with the first port's checks). */
export async function probeServices(urls: ServiceUrl[], definition: JobDefinition): Promise<ServiceReadiness> {
  const checks = healthChecksByPort(definition)
  const seen = new Set<string>()
  for (const {port, url} of urls) {
    if (seen.has(url)) continue
    seen.add(url)
    const failure = await probeUrl(url, checks.get(port) ?? [])
    if (failure) return {ready: false, detail: `${url}: ${failure}`}
  }
  return {ready: true, detail: 'every service answers'}
}

/** Null when the URL is ready, else what it answered. */
async function probeUrl(url: string, checks: HealthCheck[]): Promise<string | null> {
  if (checks.length === 0) {
    const status = await httpStatus(url, {method: 'GET'})
    return typeof status === 'number' && status !== 404 ? null : `GET / ${answered(status)}, waiting for the service`
  }
  for (const check of checks) {
    const failure = check.type === 'http' ? await probeHttp(url, check) : await probeWebsocket(url, check)
    if (failure) return failure
  }
  return null
}

async function probeHttp(url: string, check: Extract<HealthCheck, {type: 'http'}>): Promise<string | null> {
  const headers: Record<string, string> = {...check.headers}
  const hasBody = check.body !== undefined && check.body !== null
  // fetch sends no body with GET; the node's own check does, so a GET check with a body is probed without it.
  const sendsBody = hasBody && check.method !== 'GET'
  if (
    sendsBody &&
    typeof check.body !== 'string' &&
    !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')
  )
    headers['content-type'] = 'application/json'
  const body = !sendsBody ? undefined : typeof check.body === 'string' ? check.body : JSON.stringify(check.body)
  const status = await httpStatus(new URL(check.path, url).href, {method: check.method, headers, body})
  if (status === check.expected_status) return null
  return `${check.method} ${check.path} ${answered(status)}, ${check.expected_status} expected`
}

/** The status of one request without retries (a not-ready answer is the news), or why none came. */
async function httpStatus(
  url: string,
  init: {method: string; headers?: Record<string, string>; body?: string},
): Promise<number | string> {
  try {
    const response = await httpFetch(url, {...init, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS)})
    await response.body?.cancel()
    return response.status
  } catch (error) {
    const cause = (error as {cause?: {code?: string}}).cause
    return cause?.code ?? (error as Error).name
  }
}

function answered(status: number | string): string {
  return typeof status === 'number' ? `answered ${status}` : `did not answer (${status})`
}

function probeWebsocket(url: string, check: Extract<HealthCheck, {type: 'websocket'}>): Promise<string | null> {
  const target = url.replace(/^http/, 'ws')
  const {hostname} = new URL(target)
  return new Promise((resolve) => {
    const socket = new WebSocket(target, {
      handshakeTimeout: PROBE_TIMEOUT_MS,
      ...(isLoopbackHost(hostname) ? {lookup: loopbackLookup} : {}),
    })
    const done = (failure: string | null) => {
      clearTimeout(timer)
      socket.removeAllListeners()
      socket.on('error', () => {})
      socket.terminate()
      resolve(failure)
    }
    const timer = setTimeout(() => done(`the websocket sent nothing within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS)
    socket.on('message', (data: WebSocket.RawData) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)
      done(bytes.toString('utf8') === check.expected_response ? null : 'the websocket answered something else')
    })
    socket.on('unexpected-response', (_req, res) => done(`the websocket upgrade answered ${res.statusCode}`))
    socket.on('error', (error) =>
      done(`the websocket failed (${(error as NodeJS.ErrnoException).code ?? error.message})`),
    )
  })
}
