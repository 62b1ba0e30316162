/**
 * One network, resolved for the jobs commands: its RPC connection, jobs program, payment token, default market,
 * content store and where exposed services are reached. It takes the command's settings as resolved once
 * (lib/settings/settings.ts: flag > environment > profile > config file > preset), never flags or the environment. On
 * localnet the running localnet gives them: `connectMarket` in network-connection.ts resolves it (starting it when
 * none runs) and passes its endpoints here.
 */
import {type Connection, PublicKey} from '@solana/web3.js'

import {parseAddressText} from '../text/base58-text.js'
import {
  type ContentClient,
  type ContentSettings,
  DEFAULT_MAX_CONTENT_BYTES,
  networkContentClient,
} from '../ipfs/client.js'
import type {Network} from '../network.js'
import {ExitCode, GpunetError} from '../errors.js'
import {nodeApiUrl} from '../node-api/protocol.js'
import type {Settings} from '../settings/settings.js'
import {NETWORK_PRESETS, rewardsAccounts} from './networks.js'
import {DEFAULT_PINNING_SERVICE_URL} from '../settings/presets.js'
import {openConnection} from './rpc/rpc.js'
import {DEFAULT_MAX_PRIORITY_FEE_LAMPORTS, type FeePolicy} from './rpc/send.js'

/**
 * A command's settings as the market layer takes them: resolved once, each value typed by its kind with where it
 * comes from (settings/kinds.ts read them: nothing here parses a setting).
 */
export type MarketSettings = Pick<Settings, 'network' | 'configFile' | 'typed' | 'envName'>

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
  /** The host manager (`/markets/`, `/markets/price`) and its reservations routes: the network's, or the localnet's. */
  hostManagerUrl: string | null
  reservationsUrl: string | null
  /** The localnet's node (what it runs with, or why it is off; null with --no-node); undefined on other networks. */
  localnetNode?: LocalnetNodeStatus | null
  /** The localnet's markets and how many nodes serve each now; undefined on other networks. */
  localnetMarkets?: LocalnetMarketNodes[]
  /** Priority fees: on by default on mainnet, opt-in elsewhere; capped. */
  fees: FeePolicy
  /** The content store: reads through the gateway; uploads need a store configured (checked on first upload). */
  content(): ContentClient
  /** The rewards accounts `list` and `extend` name: derived from the preset, each overridable by a setting. */
  rewards(): RewardsAccounts
}

/** A market of the localnet: its address and slug, and how many of its nodes run now. */
export interface LocalnetMarketNodes {
  address: string
  slug: string
  nodes: number
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
  /** Its markets (absent from a localnet before markets files: its default market alone). */
  markets?: LocalnetMarketNodes[]
  rewards: RewardsAccounts
}

/** Opens a network's RPC connection with the command's settings; a localnet's endpoints are given. */
export function marketNetwork(settings: MarketSettings, localnet?: LocalnetEndpoints): MarketNetwork {
  const values = marketValues(settings)
  const where = values.network === 'localnet' ? localnetPlaces(values, localnet) : networkPlaces(values)
  return {
    name: values.network,
    rpcUrl: where.rpcUrl,
    connection: openConnection(where.rpcUrl),
    programId: where.programId,
    mint: where.mint,
    defaultMarket: where.defaultMarket,
    networkHost: where.networkHost,
    gatewayUrl: where.gatewayUrl,
    nodeApiUrl: (node) => nodeApiUrl(node, where.nodeApi),
    indexerUrl: where.indexerUrl,
    hostManagerUrl: where.hostManagerUrl,
    reservationsUrl: where.reservationsUrl,
    localnetNode: where.localnetNode,
    localnetMarkets: where.localnetMarkets,
    fees: values.fees,
    content: () => networkContentClient(values.content, where.contentStore),
    rewards: where.rewards,
  }
}

/** Where a network's parts are: what MarketNetwork names, before its connection and clients are made. */
type NetworkPlaces = Pick<
  MarketNetwork,
  | 'rpcUrl'
  | 'programId'
  | 'mint'
  | 'defaultMarket'
  | 'networkHost'
  | 'gatewayUrl'
  | 'indexerUrl'
  | 'hostManagerUrl'
  | 'reservationsUrl'
  | 'localnetNode'
  | 'localnetMarkets'
> & {
  nodeApi: Parameters<typeof nodeApiUrl>[1]
  /** The localnet's own content store, where uploads go when no other is set. */
  contentStore?: string
  rewards(): RewardsAccounts
}

/** Devnet's or mainnet's parts: their presets, each overridable by a setting. */
function networkPlaces(values: MarketValues): NetworkPlaces {
  const preset = NETWORK_PRESETS[values.network]
  const mint = preset.mint!
  const {networkHost, nodeApiUrl: template, rewardsReflection, rewardsVault} = values
  const rewardsProgram = required(values, 'rewardsProgram')
  return {
    rpcUrl: required(values, 'rpcUrl'),
    programId: preset.programId,
    mint,
    defaultMarket: new PublicKey(required(values, 'market')),
    networkHost,
    gatewayUrl: null,
    nodeApi: {template, networkHost},
    indexerUrl: required(values, 'indexerUrl'),
    hostManagerUrl: values.hostManagerUrl ?? null,
    reservationsUrl: values.reservationsUrl ?? null,
    rewards: () => rewardsAccounts(new PublicKey(rewardsProgram), mint, {rewardsReflection, rewardsVault}),
  }
}

/** What the market layer takes of a command's settings, each read once by its kind. */
interface MarketValues {
  network: Network
  rpcUrl?: string
  market?: string
  networkHost: string | null
  nodeApiUrl?: string
  indexerUrl?: string
  hostManagerUrl?: string
  reservationsUrl?: string
  rewardsProgram?: string
  rewardsReflection?: string
  rewardsVault?: string
  fees: FeePolicy
  content: ContentSettings
}

function marketValues(settings: MarketSettings): MarketValues {
  const {network} = settings
  const gateway = settings.typed('ipfsGateway')
  return {
    network,
    rpcUrl: settings.typed('rpcUrl')?.value,
    market: settings.typed('market')?.value,
    networkHost: settings.typed('networkHost')?.value ?? null,
    nodeApiUrl: settings.typed('nodeApiUrl')?.value,
    indexerUrl: settings.typed('indexerUrl')?.value,
    hostManagerUrl: settings.typed('hostManagerUrl')?.value,
    reservationsUrl: settings.typed('reservationsUrl')?.value,
    rewardsProgram: settings.typed('rewardsProgram')?.value,
    rewardsReflection: settings.typed('rewardsReflection')?.value,
    rewardsVault: settings.typed('rewardsVault')?.value,
    // Priority fees: as set (a flag first), else the network's preset (on for mainnet only); capped (SOL).
    fees: {
      priorityFee: settings.typed('priorityFee')?.value ?? NETWORK_PRESETS[network].priorityFeeByDefault,
      maxPriorityFeeLamports: settings.typed('maxPriorityFee')?.value ?? DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
    },
    content: {
      network,
      pinataJwt: settings.typed('pinataJwt')?.value,
      pinningServiceUrl: settings.typed('pinningServiceUrl')?.value ?? DEFAULT_PINNING_SERVICE_URL,
      contentStoreUrl: settings.typed('contentStoreUrl')?.value,
      ipfsGatewaySet: gateway?.from === 'preset' ? undefined : gateway?.value,
      ipfsGatewayPreset: gateway?.from === 'preset' ? gateway.value : undefined,
      maxBytes: settings.typed('maxContentBytes')?.value ?? DEFAULT_MAX_CONTENT_BYTES,
      missingStore: () => missingContentStore(settings),
    },
  }
}

/** The localnet's parts: what the running localnet says, an RPC or indexer setting above it. */
function localnetPlaces(values: MarketValues, localnet: LocalnetEndpoints | undefined): NetworkPlaces {
  if (!localnet) throw new Error('the localnet endpoints are resolved by connectMarket (network-connection.ts)')
  return {
    rpcUrl: values.rpcUrl ?? localnet.rpcUrl,
    programId: localnet.programId,
    mint: localnet.mint,
    defaultMarket: localnet.market,
    networkHost: null,
    gatewayUrl: localnet.gatewayUrl,
    nodeApi: {template: values.nodeApiUrl, gatewayUrl: localnet.gatewayUrl},
    indexerUrl: values.indexerUrl ?? trimUrl(localnet.rpcUrl),
    // The localnet's RPC port serves its host manager and reservations routes.
    hostManagerUrl: values.hostManagerUrl ?? trimUrl(localnet.rpcUrl),
    reservationsUrl: values.reservationsUrl ?? trimUrl(localnet.rpcUrl),
    localnetNode: localnet.node,
    localnetMarkets: localnet.markets,
    contentStore: localnet.contentStoreUrl,
    rewards: () => localnet.rewards,
  }
}

/** A setting every network other than localnet presets. */
function required(values: MarketValues, key: 'rpcUrl' | 'market' | 'indexerUrl' | 'rewardsProgram'): string {
  const value = values[key]
  if (value === undefined) throw new Error(`${key} has no preset on ${values.network}`)
  return value
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

/** Parses a base58 address given by the user, or a usage error naming where it came from. */
export function parseAddress(text: string, what: string): PublicKey {
  return new PublicKey(parseAddressText(text, what))
}

function trimUrl(url: string): string {
  return url.replace(/\/+$/, '')
}
