/**
 * The network settings the jobs commands read, and the localnet's rules for its RPC and node API URLs: without
 * web3.js, so a command served before it loads (`job exec`, src/fast-start.ts) resolves them as connect.ts does.
 */
import {type Setting, settingValue} from '../network.js'
import {nodeApiUrl} from '../node-api/protocol.js'

/** Network settings the jobs commands read, with their environment variables (see docs/networks.md). */
export const SETTINGS = {
  rpcUrl: {key: 'rpcUrl', env: 'GPUNET_RPC_URL', flag: '--rpc'},
  networkHost: {key: 'networkHost', env: 'GPUNET_NETWORK_HOST', flag: '--network-host'},
  market: {key: 'market', env: 'GPUNET_MARKET', flag: '--market'},
  contentStoreUrl: {key: 'contentStoreUrl', env: 'GPUNET_CONTENT_STORE_URL'},
  pinataJwt: {key: 'pinataJwt', env: 'GPUNET_PINATA_JWT'},
  pinningServiceUrl: {key: 'pinningServiceUrl', env: 'GPUNET_PINNING_SERVICE_URL'},
  ipfsGateway: {key: 'ipfsGateway', env: 'GPUNET_IPFS_GATEWAY'},
  maxPriorityFee: {key: 'maxPriorityFee', env: 'GPUNET_MAX_PRIORITY_FEE', flag: '--max-priority-fee'},
  priorityFee: {key: 'priorityFee', env: 'GPUNET_PRIORITY_FEE', flag: '--priority-fee'},
  rewardsReflection: {key: 'rewardsReflection', env: 'GPUNET_REWARDS_REFLECTION'},
  rewardsVault: {key: 'rewardsVault', env: 'GPUNET_REWARDS_VAULT'},
  rewardsProgram: {key: 'rewardsProgram', env: 'GPUNET_REWARDS_PROGRAM'},
  nodeApiUrl: {key: 'nodeApiUrl', env: 'GPUNET_NODE_API_URL'},
  indexerUrl: {key: 'indexerUrl', env: 'GPUNET_INDEXER_URL'},
  maxContentBytes: {key: 'maxContentBytes', env: 'GPUNET_MAX_CONTENT_BYTES'},
} as const satisfies Record<string, Setting>

/** The localnet's JSON-RPC URL: `--rpc` > `GPUNET_RPC_URL` > config file > the running localnet's. */
export function localnetRpcUrl(running: string, flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  return settingValue('localnet', SETTINGS.rpcUrl, flag, env) ?? running
}

/**
 * Where a localnet node's API answers: `GPUNET_NODE_API_URL` (or the config file's), else the gateway, which serves
 * it under the node's own name: http://<node>.node.localhost:<port>.
 */
export function localnetNodeApiUrl(
  node: string,
  gatewayUrl: string | null,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  return nodeApiUrl(node, {
    template:
      settingValue('localnet', SETTINGS.nodeApiUrl, undefined, env) ??
      (gatewayUrl ? gatewayUrl.replace('//', '//{node}.') : null),
  })
}
