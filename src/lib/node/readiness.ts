/**
 * Whether a running job's service answers, seen from the poster's side: through its service URL, as a user
 * reaches it. A port with health checks is ready when every check answers as the definition expects; a port
 * without any when the service itself answers (see probeUrl).
 */
import type {HealthCheck} from '../definition/schema.js'
import {describeHttpFailure, httpProbe} from '../http/client.js'
import {type ExposedService, type ExposingDefinition, exposedServices, type ServiceUrl} from '../market/service-url.js'
import {gatewayAnswer} from './gateway-answer.js'
import {checkHttp, checkWebsocket} from './health.js'

/** How long one probe may take before it counts as not ready. */
const PROBE_TIMEOUT_MS = 5000

/** Whether every service URL is ready, and what the first one that is not answered. */
export interface ServiceReadiness {
  ready: boolean
  /** E.g. `http://….node.localhost:28980/: GET /api/tags answered 404, 200 expected`. */
  detail: string
}

/** The health checks of each exposed port (the first time a port is exposed wins, as the localnet's node decides). */
export function healthChecksByPort(definition: ExposingDefinition): Map<number, HealthCheck[]> {
  return firstChecksByPort(exposedServices(definition))
}

function firstChecksByPort(services: ExposedService[]): Map<number, HealthCheck[]> {
  const checks = new Map<number, HealthCheck[]>()
  for (const {port, healthChecks} of services) if (!checks.has(port)) checks.set(port, healthChecks)
  return checks
}

/**
 * Probes each service URL once, with the health checks of its operation's port (else the port's first ones).
 * `markedGateway`: the URLs are served by a gateway that marks its own answers (the localnet's).
 */
export async function probeServices(
  urls: ServiceUrl[],
  definition: ExposingDefinition,
  markedGateway: boolean,
): Promise<ServiceReadiness> {
  const services = exposedServices(definition)
  const byPort = firstChecksByPort(services)
  const seen = new Set<string>()
  for (const {op, port, url} of urls) {
    if (seen.has(url)) continue
    seen.add(url)
    const own = services.find((s) => s.op === op && s.port === port)
    const failure = await probeUrl(url, own?.healthChecks ?? byPort.get(port) ?? [], markedGateway)
    if (failure) return {ready: false, detail: `${url}: ${failure}`}
  }
  return {ready: true, detail: 'every service answers'}
}

/**
 * Null when the URL is ready, else what it answered. Without health checks any answer of the service itself is
 * ready, even its 404: the localnet's gateway marks its own answers (not ready, unreachable), so they are told
 * apart. The network's gateways mark nothing, and its nodes answer 404 until a service is up, so there a 404 is
 * taken for not ready (`markedGateway` false).
 */
async function probeUrl(url: string, checks: HealthCheck[], markedGateway: boolean): Promise<string | null> {
  if (checks.length === 0) {
    let answer: string
    try {
      const {status, headers} = await httpProbe(url, {method: 'GET', timeoutMs: PROBE_TIMEOUT_MS})
      const gateway = gatewayAnswer(headers)
      if (gateway === null && (markedGateway || status !== 404)) return null
      answer = gateway === null ? `answered ${status}` : `answered ${status} from the gateway (${gateway})`
    } catch (error) {
      answer = `did not answer (${describeHttpFailure(error)})`
    }
    return `GET / ${answer}, waiting for the service`
  }
  for (const check of checks) {
    const outcome =
      check.type === 'http'
        ? await checkHttp(url, check, PROBE_TIMEOUT_MS)
        : await checkWebsocket(url.replace(/^http/, 'ws'), check, PROBE_TIMEOUT_MS)
    if (!outcome.ok) {
      return check.type === 'http'
        ? `${outcome.detail}, ${check.expected_status} expected`
        : `websocket ${outcome.detail}`
    }
  }
  return null
}
