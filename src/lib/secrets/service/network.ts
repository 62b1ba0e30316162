/** The job authority of a named network, for `secrets serve --network`: its RPC and its IPFS gateway resolved. */
import {ExitCode, isGpunetError} from '../../errors.js'
import {ContentClient} from '../../ipfs/client.js'
import {connectMarket} from '../../market/connect.js'
import {type Network, requireSetting, type Setting, settingValue} from '../../network.js'
import type {JobAuthority} from './auth.js'
import {chainJobAuthority} from './chain-authority.js'
import {cachedJobAuthority} from './job-cache.js'

/** Where job definitions are read: flag > `GPUNET_IPFS_GATEWAY` > config file. */
export const IPFS_GATEWAY_SETTING = {
  key: 'ipfsGateway',
  env: 'GPUNET_IPFS_GATEWAY',
  flag: '--ipfs-gateway',
} as const satisfies Setting

export interface NetworkAuthorityOptions {
  network: Network
  rpc?: string
  ipfsGateway?: string
  note: (line: string) => void
  env?: NodeJS.ProcessEnv
}

/** Resolves the network (starting the localnet when it is the one and none runs) and its cached job authority. */
export async function connectJobAuthority(
  options: NetworkAuthorityOptions,
): Promise<{authority: JobAuthority; rpcUrl: string; ipfsGateway: string}> {
  const {network} = options
  const env = options.env ?? process.env
  const net = await connectMarket({network, rpc: options.rpc, note: options.note, env})
  const ipfsGateway = (
    network === 'localnet'
      ? (settingValue(network, IPFS_GATEWAY_SETTING, options.ipfsGateway, env) ?? net.content().url)
      : requireSetting(network, IPFS_GATEWAY_SETTING, options.ipfsGateway, env)
  ).replace(/\/+$/, '')
  const content = new ContentClient(null, ipfsGateway)
  const authority = chainJobAuthority({
    connection: net.connection,
    programId: net.programId,
    async readContent(cid) {
      try {
        return await content.get(cid)
      } catch (error) {
        if (isGpunetError(error) && error.exitCode === ExitCode.NOT_FOUND) return null
        throw error
      }
    },
    settings: {
      rpc: `--rpc (GPUNET_RPC_URL) of secrets serve, now ${net.rpcUrl}`,
      content: `--ipfs-gateway (${IPFS_GATEWAY_SETTING.env}) of secrets serve, now ${ipfsGateway}`,
    },
  })
  return {authority: cachedJobAuthority(authority), rpcUrl: net.rpcUrl, ipfsGateway}
}
