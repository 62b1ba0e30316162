/** Human rendering of a localnet's status, shared by `localnet start` and `localnet status`. */
import {counted} from '../text/words.js'
import type {LocalnetStatus} from './control.js'
import type {LocalnetIds} from './ids.js'

/** Aligned "label  value" lines of everything a user needs to point a tool at the localnet. */
export function statusLines(status: LocalnetStatus): string[] {
  const rows: [string, string | null][] = [
    ['RPC', status.rpcUrl],
    ['WebSocket', status.wsUrl],
    ['IPFS API', status.contentStoreUrl && `${status.contentStoreUrl}/api/v0/add`],
    ['IPFS gateway', status.contentStoreUrl && `${status.contentStoreUrl}/ipfs/<cid>`],
    ['Secrets', status.secretsUrl],
    ['Deployments', status.deploymentManager],
    ['Gateway', status.gatewayUrl && `http://<job>.${status.gatewayUrl.slice('http://'.length)}/`],
    ['Proxy', status.proxyUrl && `${status.proxyUrl} (HTTPS_PROXY for the network's SDK and CLI)`],
    ['Node', status.node && nodeLine(status.node)],
    ['Program', status.programId],
    ['Ids', status.ids && idsLine(status.ids)],
    ['Market', status.market],
    ['Token mint', status.mint],
    ['Faucet', status.faucet],
    ['Data', status.dataDir],
  ]
  return rows.filter(([, value]) => value).map(([label, value]) => `  ${label.padEnd(13)}${value}`)
}

function nodeLine(node: NonNullable<LocalnetStatus['node']>): string {
  if ('off' in node) return `off: ${node.off}`
  const jobs = node.runningJobs.length > 0 ? `running ${node.runningJobs.join(', ')}` : 'idle'
  return `${node.address} (${node.runtime}, chosen by --runtime ${node.runtimeChoice}; ${counted(node.gpus, 'GPU')}, ${jobs})`
}

function idsLine(ids: LocalnetIds): string {
  return ids === 'own'
    ? 'own (its own mint; the jobs program under the mainnet id)'
    : `${ids}'s jobs program and token mint`
}
