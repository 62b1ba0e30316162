/**
 * Resolving a network for a command, in one place above market/ and secrets/: on localnet, the running localnet
 * (started in the background when none runs) gives the RPC, content store, secrets service and market; on devnet
 * and mainnet, the settings (flag > `GPUNET_*` environment > config file > preset) do.
 */
import {PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError, isGpunetError} from './errors.js'
import {ContentClient} from './ipfs/client.js'
import {ensureLocalnet, localnetStatus} from './localnet/control.js'
import {defaultDataDir, defaultPort} from './localnet/paths.js'
import {localnetRewardsAccounts} from './localnet/rewards.js'
import {type ConnectOptions, type MarketNetwork, marketNetwork, parseAddress} from './market/connect.js'
import type {JobView} from './market/jobs.js'
import {readOwnJob} from './market/manage.js'
import {NETWORK_PRESETS} from './market/networks.js'
import {configuredSecretsUrl, type Network, requireSetting, type Setting, settingValue} from './network.js'
import {SecretsClient} from './secrets/client.js'
import type {JobAuthority} from './secrets/service/auth.js'
import {chainJobAuthority} from './secrets/service/chain-authority.js'
import {cachedJobAuthority} from './secrets/service/job-cache.js'
import {loadWallet, type Wallet} from './wallet.js'

/** The secrets service URL of a network: `--secrets-url` > `GPUNET_SECRETS_URL` > config file > the network's own. */
export function resolveSecretsUrl(
  network: Exclude<Network, 'localnet'>,
  flag?: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return configuredSecretsUrl(network, flag, env) ?? (NETWORK_PRESETS[network].secretsUrl as string)
}

/** A network's market side: its RPC connection, program, token, market and content store. */
export async function connectMarket(options: ConnectOptions): Promise<MarketNetwork> {
  if (options.network !== 'localnet') return marketNetwork(options)
  const env = options.env ?? process.env
  const dataDir = defaultDataDir(env)
  const runtime = await ensureLocalnet(dataDir, defaultPort(env), options.note)
  const status = await localnetStatus(dataDir, runtime)
  const mint = new PublicKey(status.mint!)
  return marketNetwork(options, {
    rpcUrl: runtime.rpcUrl,
    contentStoreUrl: runtime.contentStoreUrl,
    gatewayUrl: runtime.gatewayUrl ?? null,
    programId: new PublicKey(status.programId!),
    mint,
    market: new PublicKey(status.market!),
    node: status.node,
    rewards: localnetRewardsAccounts(mint),
  })
}

/** What `job stop` and `job extend` start from: the network, the poster's wallet and its job. */
export async function openOwnJob(
  flags: {
    network: string
    rpc?: string
    wallet?: string
    'network-host'?: string
    'priority-fee'?: boolean
    'max-priority-fee'?: string
  },
  job: string,
  note: (line: string) => void,
): Promise<{net: MarketNetwork; wallet: Wallet; view: JobView}> {
  const network = flags.network as Network
  const address = parseAddress(job, 'the job')
  const net = await connectMarket({
    network,
    rpc: flags.rpc,
    networkHost: flags['network-host'],
    priorityFee: flags['priority-fee'],
    maxPriorityFee: flags['max-priority-fee'],
    note,
  })
  const wallet = await loadWallet({path: flags.wallet, createIfMissing: network === 'localnet', note})
  return {net, wallet, view: await readOwnJob(net, wallet, address)}
}

/** The settings shared by the secrets commands (flags `--network`, `--secrets-url`, `--wallet`). */
export interface SecretsConnectOptions {
  network: Network
  secretsUrl?: string
  wallet?: string
  /** `--allow-unbound-login`: see SecretsClientOptions. */
  allowUnboundLogin?: boolean
  /** Where to say that a localnet was started in the background (stderr in commands). */
  note?: (line: string) => void
}

/**
 * A client for the network's secrets service, with the wallet resolved (created on localnet when missing).
 * On localnet with no URL configured, it is the localnet's own service, starting the localnet if none runs.
 */
export async function connectSecrets(options: SecretsConnectOptions): Promise<SecretsClient> {
  const url =
    options.network === 'localnet'
      ? (configuredSecretsUrl('localnet', options.secretsUrl) ?? (await localnetSecretsUrl(options.note)))
      : resolveSecretsUrl(options.network, options.secretsUrl)
  const wallet = await loadWallet({
    path: options.wallet,
    createIfMissing: options.network === 'localnet',
    note: options.note,
  })
  return new SecretsClient({url, wallet, allowUnboundLogin: options.allowUnboundLogin})
}

async function localnetSecretsUrl(note: (line: string) => void = () => {}): Promise<string> {
  const runtime = await ensureLocalnet(defaultDataDir(), defaultPort(), note)
  if (runtime.secretsUrl) return runtime.secretsUrl
  throw new GpunetError('secrets_unavailable', 'the running localnet has no secrets service', {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'it was started by an older gpunet: restart it with `gpunet localnet stop && gpunet localnet start`',
  })
}

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
    async readContent(cid, limits) {
      try {
        return await content.get(cid, limits)
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
