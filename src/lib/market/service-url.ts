/** The public URLs of a job's exposed ports, on every network. */
import type {JobDefinition} from '../definition/schema.js'
import type {Network} from '../network.js'

/** Where exposed services are reached: `networkHost` on devnet/mainnet, the localnet gateway's URL on localnet. */
export interface ServiceHosts {
  networkHost?: string | null
  /** `http://node.localhost:<port>`, null while no gateway runs. */
  gatewayUrl?: string | null
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
 * The URL of each exposed port: `https://<job>.node.<networkHost>` on devnet and mainnet, and
 * `http://<job>.node.localhost:<gateway_port>/` on localnet. Empty when the host is not known.
 */
export function serviceUrls(
  network: Network,
  job: string,
  definition: JobDefinition,
  hosts: ServiceHosts,
): ServiceUrl[] {
  const base = serviceBase(network, job, hosts)
  return base ? exposedPorts(definition).map((port) => ({port, url: base})) : []
}

function serviceBase(network: Network, job: string, hosts: ServiceHosts): string | null {
  if (network !== 'localnet') return hosts.networkHost ? `https://${job}.node.${hosts.networkHost}` : null
  if (!hosts.gatewayUrl) return null
  const gateway = new URL(hosts.gatewayUrl)
  return `${gateway.protocol}//${job}.${gateway.host}/`
}
