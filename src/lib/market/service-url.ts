/** The public URLs of a job's exposed ports, on every network. */
import type {JobDefinition} from '../definition/schema.js'
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

export interface ServiceUrl {
  port: number
  url: string
}

/** The ports a definition exposes, in operation order, without repeats. */
export function exposedPorts(definition: JobDefinition): number[] {
  const ports = definition.ops.flatMap((op) => {
    const expose = op.args.expose
    if (expose === undefined) return []
    return typeof expose === 'number' ? [expose] : expose.map((p) => p.port)
  })
  return [...new Set(ports)]
}

/**
 * The URL of each exposed port: `https://<job>.node.<networkHost>` on devnet and mainnet. On localnet the
 * first port is at `http://<job>.node.localhost:<gateway_port>/` and each other port P at
 * `http://<job>-P.node.localhost:<gateway_port>/`, as the node gateway routes them. Empty when the host is not
 * known.
 */
export function serviceUrls(
  network: Network,
  job: string,
  definition: JobDefinition,
  hosts: ServiceHosts,
): ServiceUrl[] {
  const ports = exposedPorts(definition)
  if (network !== 'localnet') {
    return hosts.networkHost ? ports.map((port) => ({port, url: `https://${job}.node.${hosts.networkHost}`})) : []
  }
  if (!hosts.gatewayUrl) return []
  const gateway = new URL(hosts.gatewayUrl)
  const url = (label: string) => `${gateway.protocol}//${label}.${gateway.host}/`
  return ports.map((port, i) => ({port, url: url(i === 0 ? job : portLabel(job, port))}))
}
