/**
 * The one resolver of a command's settings: each setting's value in force and where it comes from, by
 * flag > environment (GPUNET_*) > profile > config file > preset. A command resolves them once (BaseCommand),
 * reading the config file once, and hands the result down: the layers below take values, never flags or
 * `process.env`. A new setting is one more entry in SETTINGS; one with a flag also names that flag in
 * SETTING_FLAGS (src/cli/flags.ts), so that the commands declaring it feed the resolver.
 */

import {type ConfigDocument, configFile, type NetworkConfig, type Profile, readConfigFile} from './config.js'
import {ExitCode, GpunetError} from '../errors.js'
import {defaultDataDir, defaultPort} from '../localnet/paths.js'
import {DEFAULT_PINNING_SERVICE_URL, SETTING_PRESETS} from '../market/presets.js'
import {type InForce, type Network, NETWORKS} from '../network.js'
import {configDir} from '../keys/private-file.js'

// The wallet file the settings choose: defined beside the key's loading (web3-free), so wallet.ts need not import
// this module (market/ imports wallet.ts, and this module reaches market/ through localnet/).
export {walletPath} from '../keys/wallet-key.js'

/** The kind of value a setting takes: what `gpunet config set` checks (config-settings.ts). */
export type SettingKind =
  'url' | 'address' | 'boolean' | 'sol' | 'network' | 'path' | 'host' | 'text' | 'bytes' | 'ids' | 'nodes'

/** One setting: its environment variable, its kind, its flag (on the commands that take it) and its preset. */
export interface SettingSpec {
  env: string
  kind: SettingKind
  /** The flag that sets it, on the commands that declare the shared flag (src/cli/flags.ts). */
  flag?: string
  /** An older name of its environment variable, still read below `env` (one release's grace). */
  legacyEnv?: string
  /** Only a profile holds it (its network, its wallet): a network's section of the config file does not. */
  profileOnly?: boolean
  /** Its value on a network when nothing sets it; null when it has none there. */
  preset?: (network: Network) => string | null
}

/** Every setting gpunet reads, in the order `gpunet config list` shows them (docs/networks.md, "Every setting"). */
export const SETTINGS = {
  network: {env: 'GPUNET_NETWORK', kind: 'network', flag: '--network', profileOnly: true, preset: () => 'localnet'},
  wallet: {env: 'GPUNET_WALLET', kind: 'path', flag: '--wallet', profileOnly: true},
  rpcUrl: {env: 'GPUNET_RPC_URL', kind: 'url', flag: '--rpc', preset: (net) => SETTING_PRESETS[net].rpcUrl},
  secretsUrl: {
    env: 'GPUNET_SECRETS_URL',
    kind: 'url',
    flag: '--secrets-url',
    preset: (net) => SETTING_PRESETS[net].secretsUrl,
  },
  market: {
    env: 'GPUNET_MARKET',
    kind: 'address',
    flag: '--market',
    preset: (net) => SETTING_PRESETS[net].market,
  },
  contentStoreUrl: {env: 'GPUNET_CONTENT_STORE_URL', kind: 'url'},
  pinataJwt: {env: 'GPUNET_PINATA_JWT', kind: 'text'},
  pinningServiceUrl: {env: 'GPUNET_PINNING_SERVICE_URL', kind: 'url', preset: () => DEFAULT_PINNING_SERVICE_URL},
  ipfsGateway: {
    env: 'GPUNET_IPFS_GATEWAY',
    kind: 'url',
    flag: '--ipfs-gateway',
    preset: (net) => SETTING_PRESETS[net].ipfsGateway,
  },
  networkHost: {
    env: 'GPUNET_NETWORK_HOST',
    kind: 'host',
    flag: '--network-host',
    preset: (net) => SETTING_PRESETS[net].networkHost,
  },
  priorityFee: {
    env: 'GPUNET_PRIORITY_FEE',
    kind: 'boolean',
    flag: '--priority-fee',
    preset: (net) => (net === 'localnet' ? null : String(SETTING_PRESETS[net].priorityFeeByDefault)),
  },
  maxPriorityFee: {env: 'GPUNET_MAX_PRIORITY_FEE', kind: 'sol', flag: '--max-priority-fee'},
  rewardsReflection: {env: 'GPUNET_REWARDS_REFLECTION', kind: 'address'},
  rewardsVault: {env: 'GPUNET_REWARDS_VAULT', kind: 'address'},
  rewardsProgram: {
    env: 'GPUNET_REWARDS_PROGRAM',
    kind: 'address',
    preset: (net) => SETTING_PRESETS[net].rewardsProgram,
  },
  nodeApiUrl: {env: 'GPUNET_NODE_API_URL', kind: 'text'},
  indexerUrl: {env: 'GPUNET_INDEXER_URL', kind: 'url', preset: (net) => SETTING_PRESETS[net].indexerUrl},
  maxContentBytes: {env: 'GPUNET_MAX_CONTENT_BYTES', kind: 'bytes'},
  localnetIds: {env: 'GPUNET_LOCALNET_IDS', kind: 'ids', flag: '--ids'},
  /** How many node agents `localnet start` runs (1..16; 1 when nothing sets it). */
  nodes: {env: 'GPUNET_LOCALNET_NODES', kind: 'nodes', flag: '--nodes'},
  /**
   * The deployment manager `gpunet deployment` talks to, which also serves credits (`/api/jobs`, `/api/credits`):
   * on devnet and mainnet the network's public API by default, on localnet with none set the localnet's own.
   */
  manager: {
    env: 'GPUNET_MANAGER_URL',
    kind: 'url',
    flag: '--manager',
    preset: (net) => SETTING_PRESETS[net].managerUrl,
  },
  /** An API key of that manager, sent instead of the wallet's headers (credits take one). */
  managerApiKey: {env: 'GPUNET_API_KEY', legacyEnv: 'GPUNET_MANAGER_API_KEY', kind: 'text', flag: '--api-key'},
  /** `deployment serve`'s PostgreSQL (postgres://…), shared by several managers; unset: the SQLite file. Never printed. */
  managerDatabaseUrl: {env: 'GPUNET_MANAGER_DATABASE_URL', kind: 'text', flag: '--database-url'},
  /** `deployment serve`'s vault key file: the same key on every manager of one database. */
  managerVaultKeyFile: {env: 'GPUNET_MANAGER_VAULT_KEY_FILE', kind: 'path', flag: '--vault-key-file'},
} as const satisfies Record<string, SettingSpec>

/** The name of a setting: a key of `gpunet config` and of the config file. */
export type SettingKey = keyof typeof SETTINGS

/** Every setting's name, in SETTINGS' order. */
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[]

/** What a command gives the resolver. */
export interface SettingsInput {
  /** The values its flags gave, by setting (`--rpc` as `rpcUrl`); `--network` only when given, not defaulted. */
  flags?: Partial<Record<SettingKey, string>>
  /** `--profile`; else `GPUNET_PROFILE`. */
  profile?: string
  /**
   * The network of a command that acts on one only (`localnet start`): neither GPUNET_NETWORK nor a profile chooses
   * it, and a profile for another network is not applied.
   */
  network?: Network
  /** The environment read (default: the process's). */
  env?: NodeJS.ProcessEnv
  /** Told the profile in use, so that a mainnet profile never acts unseen. */
  announce?: (line: string) => void
}

/** A command's settings, resolved once: the network, every setting in force with its source, and the files. */
export interface Settings {
  readonly network: Network
  /** The active profile's name, or null. */
  readonly profile: string | null
  /** The config file that was read, and that `gpunet config set` writes. */
  readonly configFile: string
  /** gpunet's own folder: the default wallet and the secrets service tokens live there. */
  readonly configDir: string
  /** The profiles the config file holds (for `config list`). */
  readonly profiles: {name: string; network: string}[]
  /** Where the local network keeps its files and its RPC port (GPUNET_LOCALNET_DIR, GPUNET_LOCALNET_PORT). */
  readonly localnet: {dataDir: string; port: number}
  /** A setting in force with where it comes from; undefined when nothing sets it. */
  get(key: SettingKey): InForce | undefined
  /** A setting's value in force; undefined when nothing sets it. */
  value(key: SettingKey): string | undefined
  /** A setting's environment variable, for hints. */
  envName(key: SettingKey): string
}

/** Resolves every setting of a command at once: flag > environment > profile > config file > preset. */
export function resolveSettings(input: SettingsInput = {}): Settings {
  const env = input.env ?? process.env
  const flags = input.flags ?? {}
  const file = configFile(env)
  const document = readConfigFile(file)
  const profile = activeProfile(document, input.profile || env.GPUNET_PROFILE || undefined)
  const network = input.network ?? resolveNetwork(flags.network || env.GPUNET_NETWORK || undefined, profile)
  if (profile && !input.network) input.announce?.(`Profile ${profile.name}: ${network}`)

  const values = new Map<SettingKey, InForce>()
  for (const key of SETTING_KEYS) {
    const found = locate(key, network, flags[key], env, profile, document)
    if (found) values.set(key, found)
  }
  return {
    network,
    profile: profile?.name ?? null,
    configFile: file,
    configDir: configDir(env),
    profiles: Object.entries(document.profiles).map(([name, {network: of}]) => ({name, network: of})),
    localnet: {dataDir: defaultDataDir(env), port: defaultPort(env)},
    get: (key) => values.get(key),
    value: (key) => values.get(key)?.value,
    envName: (key) => SETTINGS[key].env,
  }
}

type ActiveProfile = {name: string; profile: Profile}

function locate(
  key: SettingKey,
  network: Network,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  profile: ActiveProfile | undefined,
  document: ConfigDocument,
): InForce | undefined {
  const spec: SettingSpec = SETTINGS[key]
  if (flag) return {value: flag, from: 'flag', source: 'flag'}
  const fromEnv = env[spec.env]
  if (fromEnv) return {value: fromEnv, from: 'env', source: `env ${spec.env}`}
  const fromLegacy = spec.legacyEnv ? env[spec.legacyEnv] : undefined
  if (fromLegacy) return {value: fromLegacy, from: 'env', source: `env ${spec.legacyEnv}`}
  if (profile && profile.profile.network === network) {
    const inProfile = own<string>(profile.profile, key)
    if (inProfile) return {value: inProfile, from: 'profile', source: `profile ${profile.name}`}
  }
  if (!spec.profileOnly) {
    const section = own<NetworkConfig>(document.networks, network)
    const inFile = section ? own<string>(section, key) : undefined
    if (inFile) return {value: inFile, from: 'config', source: `config networks.${network}`}
  }
  const preset = spec.preset?.(network) ?? null
  return preset === null ? undefined : {value: preset, from: 'preset', source: 'preset'}
}

/** An own member only: a key such as `__proto__` or `toString` reads nothing of Object.prototype. */
function own<T>(record: object, key: string): T | undefined {
  return Object.hasOwn(record, key) ? ((record as Record<string, T>)[key] as T) : undefined
}

/** The profile `--profile` or `GPUNET_PROFILE` names, or undefined; an unknown name is exit 2. */
function activeProfile(document: ConfigDocument, name: string | undefined): ActiveProfile | undefined {
  if (!name) return undefined
  const profile = own<Profile>(document.profiles, name)
  if (profile) return {name, profile}
  const names = Object.keys(document.profiles)
  throw new GpunetError('profile_not_found', `there is no profile named ${name}`, {
    exitCode: ExitCode.USAGE,
    hint:
      names.length > 0
        ? `profiles: ${names.join(', ')}; create one with \`gpunet config set network devnet --profile ${name}\``
        : `create it with \`gpunet config set network devnet --profile ${name}\``,
  })
}

/**
 * The network: `--network` > `GPUNET_NETWORK` > the profile's > localnet. A profile is for one network, so a
 * different network given with it is a usage error rather than a silent mix of the two.
 */
function resolveNetwork(given: string | undefined, active: ActiveProfile | undefined): Network {
  if (given !== undefined && !isNetwork(given)) {
    throw new GpunetError('network_invalid', `there is no network named "${given}"`, {
      exitCode: ExitCode.USAGE,
      hint: `use one of ${NETWORKS.join(', ')} (--network or GPUNET_NETWORK)`,
    })
  }
  if (!active) return given ?? 'localnet'
  const {name, profile} = active
  if (!isNetwork(profile.network)) {
    throw new GpunetError('config_invalid', `the profile ${name} names the network "${profile.network}"`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint: `set one of ${NETWORKS.join(', ')}: \`gpunet config set network devnet --profile ${name}\``,
    })
  }
  if (given !== undefined && given !== profile.network) {
    throw new GpunetError('profile_network_conflict', `the profile ${name} is for ${profile.network}, not ${given}`, {
      exitCode: ExitCode.USAGE,
      hint: `drop --network (or GPUNET_NETWORK) to use the profile, or drop --profile (or GPUNET_PROFILE) for ${given}`,
    })
  }
  return profile.network
}

function isNetwork(value: string): value is Network {
  return (NETWORKS as readonly string[]).includes(value)
}
