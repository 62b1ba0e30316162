/** The public URLs of a job's exposed ports, on every network (reference/network-job-plane.md §3). */
import {createHash} from 'node:crypto'

import bs58 from 'bs58'

import type {HealthCheck} from '../definition/schema.js'
import type {Network} from '../network.js'

/** Where exposed services are reached: `networkHost` on devnet/mainnet, the localnet gateway's URL on localnet. */
export interface ServiceHosts {
  networkHost?: string | null
  /** `http://node.localhost:<port>`, null while no gateway runs. */
  gatewayUrl?: string | null
}

/** The host label of one exposed port of a job (the node gateway routes on it): base58 never holds `-`. */
export function portLabel(job: string, port: number): string {
  return `${job}-${port}`
}

/** One exposed port's public URL, with the operation that exposes it. */
export interface ServiceUrl {
  /** The id of the operation exposing the port (the first one, on localnet, where a port has one URL). */
  op: string
  port: number
  url: string
}

/** What the client reads of a definition in either form (spec 0.1 or the network's): each operation's `expose`. */
export interface ExposingDefinition {
  ops: readonly {id: string; args: {expose?: unknown}}[]
  /** The network's load-balancing key (its newer form): a string when the network's validator took it. */
  deployment_id?: unknown
}

/** One port an operation exposes. */
export interface ExposedService {
  opIndex: number
  op: string
  port: number
  /** As either form writes them (the network's adds `continuous`, which a probe does not read). */
  healthChecks: HealthCheck[]
}

/**
 * Every port each operation exposes, in order: a number, an object with a numeric `port`, or a list of them. The
 * network's placeholders (`%%ops.…%%`, spread markers) and port ranges name no port until a node fills them in.
 */
export function exposedServices(definition: ExposingDefinition): ExposedService[] {
  return definition.ops.flatMap(({id, args}, opIndex) => {
    const expose = args.expose
    const entries: unknown[] = Array.isArray(expose) ? expose : expose === undefined ? [] : [expose]
    return entries.flatMap((entry): ExposedService[] => {
      if (typeof entry === 'number') return [{opIndex, op: id, port: entry, healthChecks: []}]
      if (typeof entry !== 'object' || entry === null) return []
      const {port, health_checks: checks} = entry as {port?: unknown; health_checks?: unknown}
      if (typeof port !== 'number') return []
      const healthChecks = Array.isArray(checks) ? (checks as HealthCheck[]) : []
      return [{opIndex, op: id, port, healthChecks}]
    })
  })
}

/** The ports a definition exposes, in operation order, without repeats. */
export function exposedPorts(definition: ExposingDefinition): number[] {
  return [...new Set(exposedServices(definition).map((s) => s.port))]
}

/** The network's hash of a text (the sdk's `createHash`): the first `length` characters of base58(SHA-512(text)). */
export function networkHash(text: string, length: number): string {
  return bs58.encode(createHash('sha512').update(text).digest()).slice(0, length)
}

/**
 * The host label current nodes serve a port under (the sdk's `getExposeIdHash(job, opIndex, port)`): the network's
 * hash of `"<opIndex>:<port>:<job>"`, 44 characters.
 */
export function serviceId(job: string, opIndex: number, port: number): string {
  return networkHash(`${opIndex}:${port}:${job}`, 44)
}

/**
 * The load-balancing key a node derives from a definition's `deployment_id` and the job's poster (its project):
 * `createHash("<deployment_id>:<poster>", 45)`. Every job of one poster carrying that id shares it.
 */
export function deploymentHash(deploymentId: string, poster: string): string {
  return networkHash(`${deploymentId}:${poster}`, 45)
}

/**
 * The host label of an operation's deployment domain (`getExposeIdHash(deploymentHash, op.id, 0)`): one per exposed
 * operation, shared by every job of the deployment; its ports are the load-balancer groups `<deploymentHash>-<port>`.
 */
export function deploymentLabel(hash: string, opId: string): string {
  return networkHash(`${opId}:0:${hash}`, 44)
}

/**
 * The URL of each exposed port. On devnet and mainnet, each operation's port at
 * `https://<serviceId>.node.<networkHost>`, as current nodes serve it. On localnet the first port is at
 * `http://<job>.node.localhost:<gateway_port>/` and each other port P at `http://<job>-P.node.localhost:<gateway_port>/`,
 * as the node gateway routes them (the spec's form). Empty when the host is not known.
 */
export function serviceUrls(
  network: Network,
  job: string,
  definition: ExposingDefinition,
  hosts: ServiceHosts,
): ServiceUrl[] {
  const services = exposedServices(definition)
  if (network !== 'localnet') {
    const host = hosts.networkHost
    if (!host) return []
    return services.map(({opIndex, op, port}) => ({
      op,
      port,
      url: `https://${serviceId(job, opIndex, port)}.node.${host}`,
    }))
  }
  if (!hosts.gatewayUrl) return []
  const gateway = new URL(hosts.gatewayUrl)
  const url = (label: string) => `${gateway.protocol}//${label}.${gateway.host}/`
  const seen = new Set<number>()
  const unique = services.filter(({port}) => !seen.has(port) && seen.add(port))
  return unique.map(({op, port}, i) => ({op, port, url: url(i === 0 ? job : portLabel(job, port))}))
}

/**
 * The host the network's names of exposed ports live under, with its scheme: the FRP server address of devnet and
 * mainnet (`node.<networkHost>`, over https) or the localnet's gateway (`node.localhost:<port>`, over http); null when
 * the host is not known.
 */
function networkNameHost(network: Network, hosts: ServiceHosts): {scheme: string; host: string} | null {
  if (network !== 'localnet') return hosts.networkHost ? {scheme: 'https:', host: `node.${hosts.networkHost}`} : null
  if (!hosts.gatewayUrl) return null
  const gateway = new URL(hosts.gatewayUrl)
  return {scheme: gateway.protocol, host: gateway.host}
}

/**
 * The URL of each exposed port under the network's own name (its expose-id hash), on the localnet's gateway: what
 * the network's CLI prints for a job, answered on the localnet too. On devnet and mainnet `serviceUrls` gives these.
 */
export function localnetNetworkUrls(job: string, definition: ExposingDefinition, hosts: ServiceHosts): ServiceUrl[] {
  const at = networkNameHost('localnet', hosts)
  if (!at) return []
  return exposedServices(definition).map(({opIndex, op, port}) => ({
    op,
    port,
    url: `${at.scheme}//${serviceId(job, opIndex, port)}.${at.host}/`,
  }))
}

/**
 * The deployment URL of every exposed port of a deployment whose jobs carry `deploymentId` and are posted by
 * `poster`: the domain every job of that poster and id shares (`deploymentLabel(deploymentHash(id, poster), op)`), as
 * the network's CLI and deployment manager print it (`https://<label>.<frp server address>`; on localnet the
 * gateway's `http://<label>.node.localhost:<port>/`). The ports of one operation share its one URL.
 */
export function deploymentPortUrls(
  network: Network,
  deploymentId: string,
  poster: string,
  definition: ExposingDefinition,
  hosts: ServiceHosts,
): ServiceUrl[] {
  const at = networkNameHost(network, hosts)
  if (!at) return []
  const hash = deploymentHash(deploymentId, poster)
  const tail = network === 'localnet' ? '/' : ''
  return exposedServices(definition).map(({op, port}) => ({
    op,
    port,
    url: `${at.scheme}//${deploymentLabel(hash, op)}.${at.host}${tail}`,
  }))
}

/**
 * Each exposed operation's deployment URL, when the definition has a `deployment_id` (deploymentPortUrls). `port`
 * is the one the domain reaches, the operation's first exposed port: frps routes a domain to the first group that
 * claims it, and a node registers an operation's ports in order.
 */
export function deploymentUrls(
  network: Network,
  definition: ExposingDefinition,
  poster: string,
  hosts: ServiceHosts,
): ServiceUrl[] {
  const id = definition.deployment_id
  if (typeof id !== 'string') return []
  const seen = new Set<string>()
  return deploymentPortUrls(network, id, poster, definition, hosts).filter(({op}) => !seen.has(op) && seen.add(op))
}
