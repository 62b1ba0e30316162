/**
 * One network, resolved for the jobs commands: its RPC connection, jobs program, payment token, default market,
 * content store and where exposed services are reached. It takes the command's settings as resolved once
 * (lib/settings.ts: flag > environment > profile > config file > preset), never flags or the environment. On
 * localnet the running localnet gives them: `connectMarket` in network-connection.ts resolves it (starting it when
 * none runs) and passes its endpoints here.
 */
import {type Connection, PublicKey} from '@solana/web3.js'

import {ContentClient, DEFAULT_MAX_CONTENT_BYTES, IpfsApiUploader, PinningServiceUploader} from '../ipfs/client.js'
import type {InForce, Network} from '../network.js'
import {ExitCode, GpunetError} from '../errors.js'
import {nodeApiUrl} from '../node-api/protocol.js'
import {parseAmount} from './amounts.js'
import {SOL_DECIMALS} from './balances.js'
import {findRewardsReflection, findRewardsVault, NETWORK_PRESETS} from './networks.js'
import {openConnection} from './rpc.js'
import {DEFAULT_MAX_PRIORITY_FEE_LAMPORTS, type FeePolicy} from './send.js'

/** The settings the market layer reads (see docs/networks.md). */
export type MarketSettingKey =
  | 'rpcUrl'
  | 'networkHost'
  | 'market'
  | 'contentStoreUrl'
  | 'pinataJwt'
  | 'pinningServiceUrl'
  | 'ipfsGateway'
  | 'priorityFee'
  | 'maxPriorityFee'
  | 'rewardsReflection'
  | 'rewardsVault'
  | 'rewardsProgram'
  | 'nodeApiUrl'
  | 'indexerUrl'
  | 'maxContentBytes'

/** A command's settings as the market layer takes them: resolved once, each value with where it comes from. */
export interface MarketSettings {
  readonly network: Network
  /** The config file `gpunet config set` writes, for hints. */
  readonly configFile: string
  /** A setting in force (a preset included); undefined when nothing sets it. */
  get(key: MarketSettingKey): InForce | undefined
  /** A setting's environment variable, for hints. */
  envName(key: MarketSettingKey): string
}

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

/** Opens a network's RPC connection with the command's settings; a localnet's endpoints are given. */
export function marketNetwork(settings: MarketSettings, localnet?: LocalnetEndpoints): MarketNetwork {
  const {network} = settings
  if (network === 'localnet') {
    if (!localnet) throw new Error('the localnet endpoints are resolved by connectMarket (network-connection.ts)')
    return localnetMarket(settings, localnet)
  }
  const preset = NETWORK_PRESETS[network]
  const value = (key: MarketSettingKey) => settings.get(key)?.value
  const rpcUrl = required(settings, 'rpcUrl')
  const mint = preset.mint!
  const networkHost = value('networkHost') ?? null
  const override = (key: MarketSettingKey, derived: () => PublicKey) => {
    const given = settings.get(key)
    return given ? address(key, given) : derived()
  }
  return {
    name: network,
    rpcUrl,
    connection: openConnection(rpcUrl),
    programId: preset.programId,
    mint,
    defaultMarket: address('market', settings.get('market')!),
    networkHost,
    gatewayUrl: null,
    nodeApiUrl: (node) => nodeApiUrl(node, {template: value('nodeApiUrl'), networkHost}),
    indexerUrl: trimUrl(required(settings, 'indexerUrl')),
    fees: feePolicy(settings),
    content: () => contentClient(settings),
    rewards: () => {
      const rewardsProgram = address('rewardsProgram', settings.get('rewardsProgram')!)
      return {
        rewardsReflection: override('rewardsReflection', () => findRewardsReflection(rewardsProgram)),
        rewardsVault: override('rewardsVault', () => findRewardsVault(rewardsProgram, mint)),
        rewardsProgram,
      }
    },
  }
}

function localnetMarket(settings: MarketSettings, localnet: LocalnetEndpoints): MarketNetwork {
  const value = (key: MarketSettingKey) => settings.get(key)?.value
  const rpcUrl = value('rpcUrl') ?? localnet.rpcUrl
  return {
    name: 'localnet',
    rpcUrl,
    connection: openConnection(rpcUrl),
    programId: localnet.programId,
    mint: localnet.mint,
    defaultMarket: localnet.market,
    networkHost: null,
    gatewayUrl: localnet.gatewayUrl,
    // The gateway serves the node's API under the node's own name: http://<node>.node.localhost:<port>.
    nodeApiUrl: (node) =>
      nodeApiUrl(node, {
        template: value('nodeApiUrl') ?? (localnet.gatewayUrl ? localnet.gatewayUrl.replace('//', '//{node}.') : null),
      }),
    indexerUrl: trimUrl(value('indexerUrl') ?? localnet.rpcUrl),
    localnetNode: localnet.node,
    fees: feePolicy(settings),
    content: () => contentClient(settings, localnet.contentStoreUrl),
    rewards: () => localnet.rewards,
  }
}

/** A setting every network other than localnet presets. */
function required(settings: MarketSettings, key: MarketSettingKey): string {
  const found = settings.get(key)
  if (!found) throw new Error(`${key} has no preset on ${settings.network}`)
  return found.value
}

/**
 * The content store of a network. Uploads: a pinning service when a JWT is set, else an IPFS HTTP API when its URL
 * is set, else (localnet) the localnet's store. Reads: the gateway set, else the IPFS API's own `/ipfs/` path,
 * else the network's gateway (its preset), else (localnet) the localnet's store.
 */
function contentClient(settings: MarketSettings, localnetStore?: string): ContentClient {
  const value = (key: MarketSettingKey) => settings.get(key)?.value
  const jwt = value('pinataJwt')
  const apiUrl = value('contentStoreUrl') ?? localnetStore
  const uploader = jwt
    ? new PinningServiceUploader(trimUrl(value('pinningServiceUrl') ?? DEFAULT_PINNING_SERVICE_URL), jwt)
    : apiUrl
      ? new IpfsApiUploader(trimUrl(apiUrl))
      : null
  const gatewaySetting = settings.get('ipfsGateway')
  const gatewaySet = gatewaySetting?.from === 'preset' ? undefined : gatewaySetting?.value
  const gateway = gatewaySet ?? apiUrl ?? gatewaySetting?.value
  if (gateway === undefined) throw new Error(`no content gateway on ${settings.network}`)
  const maxBytes = settings.get('maxContentBytes')
  return new ContentClient(
    uploader,
    trimUrl(gateway),
    () => missingContentStore(settings),
    maxBytes === undefined ? DEFAULT_MAX_CONTENT_BYTES : parseByteCount(maxBytes),
  )
}

/** A byte count setting: a whole number of bytes, at least 1 KiB; a usage error naming where it was set otherwise. */
function parseByteCount({value, source}: InForce): number {
  const bytes = /^\d{4,15}$/.test(value) ? Number(value) : NaN
  if (bytes >= 1024) return bytes
  throw new GpunetError(
    'invalid_setting',
    `maxContentBytes (${source}) must be a whole number of bytes, at least 1024, not "${value}"`,
    {exitCode: ExitCode.USAGE},
  )
}

function missingContentStore(settings: MarketSettings): GpunetError {
  const {network} = settings
  const inConfig = (key: string) => `\`gpunet config set ${key} --network ${network}\` (${settings.configFile})`
  return new GpunetError(
    'content_store_missing',
    `no content store is configured for ${network}: the job definition has nowhere to be uploaded`,
    {
      exitCode: ExitCode.USAGE,
      hint:
        `a pinning service: set ${settings.envName('pinataJwt')} (its JWT; the service is ${DEFAULT_PINNING_SERVICE_URL} ` +
        `unless ${settings.envName('pinningServiceUrl')} names another) or ${inConfig('pinataJwt')}; ` +
        `or an IPFS HTTP API: set ${settings.envName('contentStoreUrl')} or ${inConfig('contentStoreUrl')}. ` +
        `Reads go through ${settings.envName('ipfsGateway')} (see docs/networks.md)`,
    },
  )
}

/** Priority fees: as set (a flag first), else on for mainnet only; capped by the maximum fee set (SOL). */
function feePolicy(settings: MarketSettings): FeePolicy {
  const configured = settings.get('priorityFee')
  const priorityFee = configured ? parseSwitch(configured) : NETWORK_PRESETS[settings.network].priorityFeeByDefault
  const max = settings.get('maxPriorityFee')?.value
  const maxPriorityFeeLamports =
    max === undefined ? DEFAULT_MAX_PRIORITY_FEE_LAMPORTS : parseAmount(max, SOL_DECIMALS, 'maximum priority fee (SOL)')
  return {priorityFee, maxPriorityFeeLamports}
}

function parseSwitch({value, source}: InForce): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true
  if (/^(0|false|no|off)$/i.test(value)) return false
  throw new GpunetError('invalid_setting', `priorityFee (${source}) must be true or false, not "${value}"`, {
    exitCode: ExitCode.USAGE,
  })
}

/** Parses a base58 address given by the user, or a usage error naming where it came from. */
export function parseAddress(text: string, what: string): PublicKey {
  try {
    return new PublicKey(text)
  } catch {
    throw new GpunetError('invalid_address', `${what} "${text}" is not a Solana address`, {
      exitCode: ExitCode.USAGE,
      hint: 'an address is a base58 public key such as 7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41',
    })
  }
}

function address(key: MarketSettingKey, {value, source}: InForce): PublicKey {
  return parseAddress(value, `${key} (${source})`)
}

function trimUrl(url: string): string {
  return url.replace(/\/+$/, '')
}
