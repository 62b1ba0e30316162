/** Human rendering of a localnet's status, shared by `localnet start` and `localnet status`. */
import {counted} from '../../text/words.js'
import type {LocalnetStatus} from './control.js'
import type {LocalnetIds} from '../../settings/kinds.js'

/** Aligned "label  value" lines of everything a user needs to point a tool at the localnet. */
export function statusLines(status: LocalnetStatus): string[] {
  const rows: [string, string | null][] = [
    ['RPC', status.rpcUrl],
    ['WebSocket', status.wsUrl],
    ['IPFS API', status.contentStoreUrl && `${status.contentStoreUrl}/api/v0/add`],
    ['IPFS gateway', status.contentStoreUrl && `${status.contentStoreUrl}/ipfs/<cid>`],
    ['Secrets', status.secretsUrl],
    ['Deployments', status.deploymentManager],
    ['Gateway', status.gatewayUrl && gatewayLine(status.gatewayUrl)],
    ['TLS gateway', status.gatewayHttpsUrl && gatewayLine(status.gatewayHttpsUrl)],
    ['CA', status.caCertificate && `${status.caCertificate} (NODE_EXTRA_CA_CERTS, curl --cacert)`],
    [
      'FRP address',
      status.frpServerAddress && `${status.frpServerAddress.http}, ${status.frpServerAddress.https} (https)`,
    ],
    ['Proxy', status.proxyUrl && `${status.proxyUrl} (HTTPS_PROXY for the network's SDK and CLI)`],
    ['Node', status.node && nodeLine(status.node, status.nodes.length)],
    ['Program', status.programId],
    ['Ids', status.ids && idsLine(status.ids)],
    ['Market', status.market && `${status.market} (the default market, slug localnet)`],
    ['Markets', status.markets.length > 1 ? status.markets.map((m) => `${m.slug} ${m.address}`).join(', ') : null],
    ['Token mint', status.mint],
    ['Faucet', status.faucet],
    ['Data', status.dataDir],
  ]
  const lines = rows.filter(([, value]) => value).map(([label, value]) => `  ${label.padEnd(13)}${value}`)
  // Several nodes: one line each under the Node line, which then says what they share.
  if (status.nodes.length > 1) {
    const at = lines.findIndex((line) => line.startsWith('  Node '))
    const each = status.nodes.map(
      (n, i) =>
        `  ${''.padEnd(13)}${i + 1}. ${n.address}  ${status.markets.length > 1 ? `${n.slug}, ` : ''}${n.left ? 'left (localnet node join)' : n.job ? `running ${n.job}` : n.state}`,
    )
    lines.splice(at + 1, 0, ...each)
  }
  return lines
}

function nodeLine(node: NonNullable<LocalnetStatus['node']>, count: number): string {
  if ('off' in node) return `off: ${node.off}`
  const how = `${node.runtime}, chosen by --runtime ${node.runtimeChoice}; ${counted(node.gpus, 'GPU')}`
  if (count > 1) return `${count} nodes (${how} each), one job at a time each:`
  const jobs = node.runningJobs.length > 0 ? `running ${node.runningJobs.join(', ')}` : 'idle'
  return `${node.address} (${how}, ${jobs})`
}

/** A job's URL and a deployment's stable URL on the gateway (`http://node.localhost:<port>`, or https). */
function gatewayLine(gatewayUrl: string): string {
  const {port, protocol} = new URL(gatewayUrl)
  const scheme = protocol.slice(0, -1)
  return `${scheme}://<job>.node.localhost:${port}/, a deployment at ${scheme}://<deployment>.deploy.localhost:${port}/`
}

function idsLine(ids: LocalnetIds): string {
  return ids === 'own'
    ? 'own (its own mint; the jobs program under the mainnet id)'
    : `${ids}'s jobs program and token mint`
}
