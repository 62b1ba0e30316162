/**
 * One network, resolved for the jobs commands: its RPC connection, jobs program, payment token, default market,
 * content store and where exposed services are reached. Settings: flag > `GPUNET_*` environment > config file >
 * preset; on localnet the running localnet (started in the background when none runs) gives them.
 */
import {Connection, PublicKey} from '@solana/web3.js'

import {ContentClient} from '../ipfs/client.js'
import {localnetStatus, ensureLocalnet} from '../localnet/control.js'
import type {LocalnetNodeStatus} from '../localnet/node-agent.js'
import {defaultDataDir, defaultPort} from '../localnet/paths.js'
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

/** Resolves a network's settings and opens its RPC connection (starting the localnet when needed). */
export async function connectMarket(options: ConnectOptions): Promise<MarketNetwork> {
  const {network} = options
  const env = options.env ?? process.env
  if (network === 'localnet') return connectLocalnet(options, env)
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

async function connectLocalnet(options: ConnectOptions, env: NodeJS.ProcessEnv): Promise<MarketNetwork> {
  const dataDir = defaultDataDir(env)
  const runtime = await ensureLocalnet(dataDir, defaultPort(env), options.note)
  const status = await localnetStatus(dataDir)
  const programId = new PublicKey(status.programId!)
  const rpcUrl = settingValue('localnet', SETTINGS.rpcUrl, options.rpc, env) ?? runtime.rpcUrl
  // The localnet accepts the rewards accounts without using them (no network fee): an unowned address will do.
  const [placeholder] = PublicKey.findProgramAddressSync([Buffer.from('localnet-rewards')], programId)
  return {
    name: 'localnet',
    rpcUrl,
    connection: new Connection(rpcUrl, 'confirmed'),
    programId,
    mint: new PublicKey(status.mint!),
    defaultMarket: new PublicKey(status.market!),
    networkHost: null,
    gatewayUrl: runtime.gatewayUrl ?? null,
    localnetNode: status.node,
    content: () =>
      new ContentClient(
        trimUrl(settingValue('localnet', SETTINGS.contentStoreUrl, undefined, env) ?? runtime.contentStoreUrl),
      ),
    rewards: () => ({rewardsReflection: placeholder, rewardsVault: placeholder, rewardsProgram: placeholder}),
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
