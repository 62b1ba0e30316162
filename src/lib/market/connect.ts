/**
 * One network, resolved for the jobs commands: its RPC connection, jobs program, payment token, default market,
 * content store and where exposed services are reached. It takes the command's settings as resolved once
 * (lib/settings/settings.ts: flag > environment > profile > config file > preset), never flags or the environment. On
 * localnet the running localnet gives them: `connectMarket` in network-connection.ts resolves it (starting it when
 * none runs) and passes its endpoints here.
 */
import {type Connection, PublicKey} from '@solana/web3.js'

import {parseAddressText} from '../text/base58-text.js'
import {ContentClient, DEFAULT_MAX_CONTENT_BYTES, IpfsApiUploader, PinningServiceUploader} from '../ipfs/client.js'
import type {Network} from '../network.js'
import {ExitCode, GpunetError} from '../errors.js'
import {nodeApiUrl} from '../node-api/protocol.js'
import type {Settings} from '../settings/settings.js'
import {findRewardsReflection, findRewardsVault, NETWORK_PRESETS} from './networks.js'
import {DEFAULT_PINNING_SERVICE_URL} from '../settings/presets.js'
import {openConnection} from './rpc.js'
import {DEFAULT_MAX_PRIORITY_FEE_LAMPORTS, type FeePolicy} from './send.js'

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
  const rpcUrl = required(settings, 'rpcUrl')
  const mint = preset.mint!
  const networkHost = settings.typed('networkHost')?.value ?? null
  const override = (key: 'rewardsReflection' | 'rewardsVault', derived: () => PublicKey) => {
    const given = settings.typed(key)?.value
    return given ? new PublicKey(given) : derived()
  }
  return {
    name: network,
    rpcUrl,
    connection: openConnection(rpcUrl),
    programId: preset.programId,
    mint,
    defaultMarket: new PublicKey(required(settings, 'market')),
    networkHost,
    gatewayUrl: null,
    nodeApiUrl: (node) => nodeApiUrl(node, {template: settings.typed('nodeApiUrl')?.value, networkHost}),
    indexerUrl: required(settings, 'indexerUrl'),
    fees: feePolicy(settings),
    content: () => contentClient(settings),
    rewards: () => {
      const rewardsProgram = new PublicKey(required(settings, 'rewardsProgram'))
      return {
        rewardsReflection: override('rewardsReflection', () => findRewardsReflection(rewardsProgram)),
        rewardsVault: override('rewardsVault', () => findRewardsVault(rewardsProgram, mint)),
        rewardsProgram,
      }
    },
  }
}

function localnetMarket(settings: MarketSettings, localnet: LocalnetEndpoints): MarketNetwork {
  const rpcUrl = settings.typed('rpcUrl')?.value ?? localnet.rpcUrl
  return {
    name: 'localnet',
    rpcUrl,
    connection: openConnection(rpcUrl),
    programId: localnet.programId,
    mint: localnet.mint,
    defaultMarket: localnet.market,
    networkHost: null,
    gatewayUrl: localnet.gatewayUrl,
    nodeApiUrl: (node) =>
      nodeApiUrl(node, {template: settings.typed('nodeApiUrl')?.value, gatewayUrl: localnet.gatewayUrl}),
    indexerUrl: settings.typed('indexerUrl')?.value ?? trimUrl(localnet.rpcUrl),
    localnetNode: localnet.node,
    fees: feePolicy(settings),
    content: () => contentClient(settings, localnet.contentStoreUrl),
    rewards: () => localnet.rewards,
  }
}

/** A setting every network other than localnet presets. */
function required(settings: MarketSettings, key: 'rpcUrl' | 'market' | 'indexerUrl' | 'rewardsProgram'): string {
  const found = settings.typed(key)
  if (!found) throw new Error(`${key} has no preset on ${settings.network}`)
  return found.value
}

/**
 * The content store of a network. Uploads: a pinning service when a JWT is set, else an IPFS HTTP API when its URL
 * is set, else (localnet) the localnet's store. Reads: the gateway set, else the IPFS API's own `/ipfs/` path,
 * else the network's gateway (its preset), else (localnet) the localnet's store.
 */
function contentClient(settings: MarketSettings, localnetStore?: string): ContentClient {
  const jwt = settings.typed('pinataJwt')?.value
  const apiUrl = settings.typed('contentStoreUrl')?.value ?? localnetStore
  const uploader = jwt
    ? new PinningServiceUploader(settings.typed('pinningServiceUrl')?.value ?? DEFAULT_PINNING_SERVICE_URL, jwt)
    : apiUrl
      ? new IpfsApiUploader(trimUrl(apiUrl))
      : null
  const gatewaySetting = settings.typed('ipfsGateway')
  const gatewaySet = gatewaySetting?.from === 'preset' ? undefined : gatewaySetting?.value
  const gateway = gatewaySet ?? apiUrl ?? gatewaySetting?.value
  if (gateway === undefined) throw new Error(`no content gateway on ${settings.network}`)
  return new ContentClient(
    uploader,
    trimUrl(gateway),
    () => missingContentStore(settings),
    settings.typed('maxContentBytes')?.value ?? DEFAULT_MAX_CONTENT_BYTES,
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

/** Priority fees: as set (a flag first), else the network's preset (on for mainnet only); capped (SOL). */
function feePolicy(settings: MarketSettings): FeePolicy {
  return {
    priorityFee: settings.typed('priorityFee')?.value ?? NETWORK_PRESETS[settings.network].priorityFeeByDefault,
    maxPriorityFeeLamports: settings.typed('maxPriorityFee')?.value ?? DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
  }
}

/** Parses a base58 address given by the user, or a usage error naming where it came from. */
export function parseAddress(text: string, what: string): PublicKey {
  return new PublicKey(parseAddressText(text, what))
}

function trimUrl(url: string): string {
  return url.replace(/\/+$/, '')
}
