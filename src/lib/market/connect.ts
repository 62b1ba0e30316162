/**
 * One network, resolved for the jobs commands: its RPC connection, jobs program, payment token, default market,
 * content store and where exposed services are reached. Settings: flag > `GPUNET_*` environment > config file >
 * preset. On localnet the running localnet gives them: `connectMarket` in network-connection.ts resolves it
 * (starting it when none runs) and passes its endpoints here.
 */
import {Connection, PublicKey} from '@solana/web3.js'

import {ContentClient} from '../ipfs/client.js'
import {type Network, requireSetting, type Setting, settingValue} from '../network.js'
import {ExitCode, GpunetError} from '../errors.js'
import {NETWORK_PRESETS} from './networks.js'

/** Network settings the jobs commands read, with their environment variables (see docs/jobs.md). */
export const SETTINGS = {
  rpcUrl: {key: 'rpcUrl', env: 'GPUNET_RPC_URL', flag: '--rpc'},
  networkHost: {key: 'networkHost', env: 'GPUNET_NETWORK_HOST', flag: '--network-host'},
  contentStoreUrl: {key: 'contentStoreUrl', env: 'GPUNET_CONTENT_STORE_URL'},
  rewardsReflection: {key: 'rewardsReflection', env: 'GPUNET_REWARDS_REFLECTION'},
  rewardsVault: {key: 'rewardsVault', env: 'GPUNET_REWARDS_VAULT'},
  rewardsProgram: {key: 'rewardsProgram', env: 'GPUNET_REWARDS_PROGRAM'},
} as const satisfies Record<string, Setting>

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
  {address: string; gpus: number; runtime: 'podman' | 'host-process'; runningJobs: string[]} | {off: string}

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
  /** The localnet's node (what it runs with, or why it is off; null with --no-node); undefined on other networks. */
  localnetNode?: LocalnetNodeStatus | null
  /** The content store (resolved on first use: reading a job needs none). */
  content(): ContentClient
  /** The rewards accounts (resolved on first use: only `list` and `extend` need them). */
  rewards(): RewardsAccounts
}

export interface ConnectOptions {
  network: Network
  rpc?: string
  networkHost?: string
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
  const key = (setting: Setting) => address(setting, requireSetting(network, setting, undefined, env))
  return {
    name: network,
    rpcUrl,
    connection: new Connection(rpcUrl, 'confirmed'),
    programId: preset.programId,
    mint: preset.mint!,
    defaultMarket: preset.market!,
    networkHost: settingValue(network, SETTINGS.networkHost, options.networkHost, env) ?? null,
    gatewayUrl: null,
    content: () => new ContentClient(trimUrl(requireSetting(network, SETTINGS.contentStoreUrl, undefined, env))),
    rewards: () => ({
      rewardsReflection: key(SETTINGS.rewardsReflection),
      rewardsVault: key(SETTINGS.rewardsVault),
      rewardsProgram: key(SETTINGS.rewardsProgram),
    }),
  }
}

function localnetMarket(options: ConnectOptions, env: NodeJS.ProcessEnv, localnet: LocalnetEndpoints): MarketNetwork {
  const rpcUrl = settingValue('localnet', SETTINGS.rpcUrl, options.rpc, env) ?? localnet.rpcUrl
  return {
    name: 'localnet',
    rpcUrl,
    connection: new Connection(rpcUrl, 'confirmed'),
    programId: localnet.programId,
    mint: localnet.mint,
    defaultMarket: localnet.market,
    networkHost: null,
    gatewayUrl: localnet.gatewayUrl,
    localnetNode: localnet.node,
    content: () =>
      new ContentClient(
        trimUrl(settingValue('localnet', SETTINGS.contentStoreUrl, undefined, env) ?? localnet.contentStoreUrl),
      ),
    rewards: () => localnet.rewards,
  }
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

function address(setting: Setting, value: string): PublicKey {
  return parseAddress(value, `${setting.key} (${setting.env})`)
}

function trimUrl(url: string): string {
  return url.replace(/\/+$/, '')
}
