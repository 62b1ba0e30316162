/**
 * One network, resolved for the jobs commands: its RPC connection, jobs program, payment token, default market,
 * content store and where exposed services are reached. Settings: flag > `GPUNET_*` environment > config file >
 * preset. On localnet the running localnet gives them: `connectMarket` in network-connection.ts resolves it
 * (starting it when none runs) and passes its endpoints here.
 */
import {type Connection, PublicKey} from '@solana/web3.js'

import {parseAddressText} from '../base58-text.js'
import {configFile} from '../config.js'
import {ContentClient, DEFAULT_MAX_CONTENT_BYTES, IpfsApiUploader, PinningServiceUploader} from '../ipfs/client.js'
import {type Network, type Setting, settingValue} from '../network.js'
import {ExitCode, GpunetError} from '../errors.js'
import {nodeApiUrl} from '../node-api/protocol.js'
import {parseAmount} from './amounts.js'
import {localnetNodeApiUrl, localnetRpcUrl, SETTINGS} from './settings.js'
import {SOL_DECIMALS} from './balances.js'
import {findRewardsReflection, findRewardsVault, NETWORK_PRESETS} from './networks.js'
import {openConnection} from './rpc.js'
import {DEFAULT_MAX_PRIORITY_FEE_LAMPORTS, type FeePolicy} from './send.js'

export {SETTINGS} from './settings.js'

/** The pinning service used with GPUNET_PINATA_JWT unless GPUNET_PINNING_SERVICE_URL says otherwise. */
export const DEFAULT_PINNING_SERVICE_URL = 'https://api.pinata.cloud'

/** The rewards accounts `list` and `extend` take. */
export interface RewardsAccounts {
  rewardsReflection: PublicKey
  rewardsVault: PublicKey
  rewardsProgram: PublicKey
}

/**
 * A localnet's node as `localnet status` reports it: its address, GPUs, runtime (`podman` or `host-process`) and
 * running jobs, or why it is off. Declared here, with the client that reads it, so market/ needs nothing of
 * localnet/.
 */
export type LocalnetNodeStatus =
  | {
      address: string
      gpus: number
      /** The runtime the node runs jobs with, and what `--runtime` asked for (`auto`, `podman` or `host`). */
      runtime: 'podman' | 'host-process'
      runtimeChoice: 'auto' | 'podman' | 'host'
      runningJobs: string[]
    }
  | {off: string}

export interface MarketNetwork {
  name: Network
  rpcUrl: string
  connection: Connection
  programId: PublicKey
  mint: PublicKey
  defaultMarket: PublicKey
  /** Where exposed services are reached: set on devnet/mainnet when configured, the gateway on localnet. */
  networkHost: string | null
  gatewayUrl: string | null
  /** The base URL of a node's API (live logs, §4); null when the network host is not known. */
  nodeApiUrl(node: string): string | null
  /** The indexer that lists a poster's jobs (`/jobs/`, §5): the network's, or the localnet's own. */
  indexerUrl: string
  /** The localnet's node (what it runs with, or why it is off; null with --no-node); undefined on other networks. */
  localnetNode?: LocalnetNodeStatus | null
  /** Priority fees: on by default on mainnet, opt-in elsewhere; capped. */
  fees: FeePolicy
  /** The content store: reads through the gateway; uploads need a store configured (checked on first upload). */
  content(): ContentClient
  /** The rewards accounts `list` and `extend` name: derived from the preset, each overridable by a setting. */
  rewards(): RewardsAccounts
}

export interface ConnectOptions {
  network: Network
  rpc?: string
  networkHost?: string
  /** `--priority-fee` / `--no-priority-fee`; undefined keeps the setting or the network's default. */
  priorityFee?: boolean
  /** `--max-priority-fee`: SOL per transaction at most. */
  maxPriorityFee?: string
  /** Where to announce a localnet started in the background (stderr in commands). */
  note: (line: string) => void
  env?: NodeJS.ProcessEnv
}

/** What a running localnet tells its clients (network-connection.ts reads it from the localnet). */
export interface LocalnetEndpoints {
  rpcUrl: string
  contentStoreUrl: string
  gatewayUrl: string | null
  programId: PublicKey
  mint: PublicKey
  market: PublicKey
  /** Its node: what it runs with, or why it is off; null with --no-node. */
  node: LocalnetNodeStatus | null
  rewards: RewardsAccounts
}

/** Resolves a network's settings and opens its RPC connection; a localnet's endpoints are given. */
export function marketNetwork(options: ConnectOptions, localnet?: LocalnetEndpoints): MarketNetwork {
  const {network} = options
  const env = options.env ?? process.env
  if (network === 'localnet') {
    if (!localnet) throw new Error('the localnet endpoints are resolved by connectMarket (network-connection.ts)')
    return localnetMarket(options, env, localnet)
  }
  const preset = NETWORK_PRESETS[network]
  const rpcUrl = settingValue(network, SETTINGS.rpcUrl, options.rpc, env) ?? preset.rpcUrl!
  const mint = preset.mint!
  const value = (setting: Setting) => settingValue(network, setting, undefined, env)
  const market = value(SETTINGS.market)
  const networkHost = settingValue(network, SETTINGS.networkHost, options.networkHost, env) ?? preset.networkHost
  const override = (setting: Setting, derived: () => PublicKey) => {
    const given = value(setting)
    return given ? address(setting, given) : derived()
  }
  return {
    name: network,
    rpcUrl,
    connection: openConnection(rpcUrl),
    programId: preset.programId,
    mint,
    defaultMarket: market ? address(SETTINGS.market, market) : preset.market!,
    networkHost,
    gatewayUrl: null,
    nodeApiUrl: (node) => nodeApiUrl(node, {template: value(SETTINGS.nodeApiUrl), networkHost}),
    indexerUrl: trimUrl(value(SETTINGS.indexerUrl) ?? preset.indexerUrl!),
    fees: feePolicy(network, options, env),
    content: () => contentClient(network, env, preset.ipfsGateway!),
    rewards: () => {
      const rewardsProgram = override(SETTINGS.rewardsProgram, () => preset.rewardsProgram!)
      return {
        rewardsReflection: override(SETTINGS.rewardsReflection, () => findRewardsReflection(rewardsProgram)),
        rewardsVault: override(SETTINGS.rewardsVault, () => findRewardsVault(rewardsProgram, mint)),
        rewardsProgram,
      }
    },
  }
}

function localnetMarket(options: ConnectOptions, env: NodeJS.ProcessEnv, localnet: LocalnetEndpoints): MarketNetwork {
  const rpcUrl = localnetRpcUrl(localnet.rpcUrl, options.rpc, env)
  return {
    name: 'localnet',
    rpcUrl,
    connection: openConnection(rpcUrl),
    programId: localnet.programId,
    mint: localnet.mint,
    defaultMarket: localnet.market,
    networkHost: null,
    gatewayUrl: localnet.gatewayUrl,
    nodeApiUrl: (node) => localnetNodeApiUrl(node, localnet.gatewayUrl, env),
    indexerUrl: trimUrl(settingValue('localnet', SETTINGS.indexerUrl, undefined, env) ?? localnet.rpcUrl),
    localnetNode: localnet.node,
    fees: feePolicy('localnet', options, env),
    content: () => contentClient('localnet', env, localnet.contentStoreUrl, localnet.contentStoreUrl),
    rewards: () => localnet.rewards,
  }
}

/**
 * The content store of a network. Uploads: a pinning service when a JWT is set, else an IPFS HTTP API when its URL
 * is set, else (localnet) the localnet's store. Reads: the gateway setting, else the IPFS API's own `/ipfs/` path,
 * else the network's gateway.
 */
function contentClient(
  network: Network,
  env: NodeJS.ProcessEnv,
  presetGateway: string,
  presetStore?: string,
): ContentClient {
  const value = (setting: Setting) => settingValue(network, setting, undefined, env)
  const jwt = value(SETTINGS.pinataJwt)
  const apiUrl = value(SETTINGS.contentStoreUrl) ?? presetStore
  const uploader = jwt
    ? new PinningServiceUploader(trimUrl(value(SETTINGS.pinningServiceUrl) ?? DEFAULT_PINNING_SERVICE_URL), jwt)
    : apiUrl
      ? new IpfsApiUploader(trimUrl(apiUrl))
      : null
  const gateway = value(SETTINGS.ipfsGateway) ?? apiUrl ?? presetGateway
  const maxBytes = value(SETTINGS.maxContentBytes)
  return new ContentClient(
    uploader,
    trimUrl(gateway),
    () => missingContentStore(network, env),
    maxBytes === undefined ? DEFAULT_MAX_CONTENT_BYTES : parseByteCount(maxBytes),
  )
}

/** A byte count setting: a whole number of bytes, at least 1 KiB; a usage error otherwise. */
function parseByteCount(text: string): number {
  const bytes = /^\d{4,15}$/.test(text) ? Number(text) : NaN
  if (bytes >= 1024) return bytes
  throw new GpunetError(
    'invalid_setting',
    `${SETTINGS.maxContentBytes.env} (maxContentBytes) must be a whole number of bytes, at least 1024, not "${text}"`,
    {exitCode: ExitCode.USAGE},
  )
}

function missingContentStore(network: Network, env: NodeJS.ProcessEnv): GpunetError {
  const inConfig = (key: string) => `\`gpunet config set ${key} --network ${network}\` (${configFile(env)})`
  return new GpunetError(
    'content_store_missing',
    `no content store is configured for ${network}: the job definition has nowhere to be uploaded`,
    {
      exitCode: ExitCode.USAGE,
      hint:
        `a pinning service: set ${SETTINGS.pinataJwt.env} (its JWT; the service is ${DEFAULT_PINNING_SERVICE_URL} ` +
        `unless ${SETTINGS.pinningServiceUrl.env} names another) or ${inConfig('pinataJwt')}; ` +
        `or an IPFS HTTP API: set ${SETTINGS.contentStoreUrl.env} or ${inConfig('contentStoreUrl')}. ` +
        `Reads go through ${SETTINGS.ipfsGateway.env} (see docs/networks.md)`,
    },
  )
}

/** Priority fees: flag > GPUNET_PRIORITY_FEE > config > on for mainnet only; capped by --max-priority-fee (SOL). */
function feePolicy(network: Network, options: ConnectOptions, env: NodeJS.ProcessEnv): FeePolicy {
  const configured = settingValue(network, SETTINGS.priorityFee, undefined, env)
  const priorityFee =
    options.priorityFee ??
    (configured === undefined ? NETWORK_PRESETS[network].priorityFeeByDefault : parseSwitch(configured))
  const max = settingValue(network, SETTINGS.maxPriorityFee, options.maxPriorityFee, env)
  const maxPriorityFeeLamports =
    max === undefined ? DEFAULT_MAX_PRIORITY_FEE_LAMPORTS : parseAmount(max, SOL_DECIMALS, 'maximum priority fee (SOL)')
  return {priorityFee, maxPriorityFeeLamports}
}

function parseSwitch(text: string): boolean {
  if (/^(1|true|yes|on)$/i.test(text)) return true
  if (/^(0|false|no|off)$/i.test(text)) return false
  throw new GpunetError('invalid_setting', `${SETTINGS.priorityFee.env} must be true or false, not "${text}"`, {
    exitCode: ExitCode.USAGE,
  })
}

/** Parses a base58 address given by the user, or a usage error naming where it came from. */
export function parseAddress(text: string, what: string): PublicKey {
  return new PublicKey(parseAddressText(text, what))
}

function address(setting: Setting, value: string): PublicKey {
  return parseAddress(value, `${setting.key} (${setting.env})`)
}

function trimUrl(url: string): string {
  return url.replace(/\/+$/, '')
}
