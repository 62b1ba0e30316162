/**
 * Every setting gpunet reads: its environment variable, its kind (kinds.ts reads its text), the flag that sets it
 * and its preset. The resolver (settings.ts), the config file (config.ts), `gpunet config` and the setting flags
 * (src/cli/flags.ts) all take this one table. A new setting is one more entry here (and its flag's name in
 * src/cli/flags.ts' SETTING_FLAGS when a flag sets it).
 */
import type {KindName, KindValue} from './kinds.js'
import {DEFAULT_PINNING_SERVICE_URL, DEFAULT_PORT, defaultDataDir, SETTING_PRESETS} from './presets.js'
import type {Network} from '../network.js'

/** One setting: its environment variable, its kind, its flag (on the commands that take it) and its preset. */
export interface SettingSpec {
  env: string
  kind: KindName
  /** The flag that sets it, on the commands that declare the shared flag (src/cli/flags.ts). */
  flag?: string
  /** An older name of its environment variable, still read below `env` (one release's grace). */
  legacyEnv?: string
  /** Only a profile holds it (its network, its wallet): a network's section of the config file does not. */
  profileOnly?: boolean
  /**
   * A credential: `config list` and `config get` show only whether it is set, `config set` reads it from standard
   * input, never from an argument.
   */
  secret?: boolean
  /** Its value on a network when nothing sets it; null when it has none there. */
  preset?: (network: Network, env?: NodeJS.ProcessEnv) => string | null
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
  pinataJwt: {env: 'GPUNET_PINATA_JWT', kind: 'text', secret: true},
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
    preset: (net) => String(SETTING_PRESETS[net].priorityFeeByDefault),
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
  /** The most bytes a job's result or definition read from a gateway may have. */
  maxContentBytes: {env: 'GPUNET_MAX_CONTENT_BYTES', kind: 'bytes'},
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
  /**
   * The network's host manager (its markets' GPUs, VRAM, types and USD prices, and the token's price) and its
   * reservations routes (GPU models, free hosts), which `market list` and `market get` read beside the chain; on
   * localnet with none set the localnet's own (its RPC port serves both).
   */
  hostManagerUrl: {
    env: 'GPUNET_HOST_MANAGER_URL',
    kind: 'url',
    preset: (net) => SETTING_PRESETS[net].hostManagerUrl,
  },
  reservationsUrl: {
    env: 'GPUNET_RESERVATIONS_URL',
    kind: 'url',
    preset: (net) => SETTING_PRESETS[net].reservationsUrl,
  },
  /** An API key of that manager, sent instead of the wallet's headers (credits take one). */
  managerApiKey: {
    env: 'GPUNET_API_KEY',
    legacyEnv: 'GPUNET_MANAGER_API_KEY',
    kind: 'text',
    flag: '--api-key',
    secret: true,
  },
  /** `deployment serve`'s PostgreSQL (postgres://…), shared by several managers; unset: the SQLite file. */
  managerDatabaseUrl: {env: 'GPUNET_MANAGER_DATABASE_URL', kind: 'text', flag: '--database-url', secret: true},
  /** `deployment serve`'s vault key file: the same key on every manager of one database. */
  managerVaultKeyFile: {env: 'GPUNET_MANAGER_VAULT_KEY_FILE', kind: 'path', flag: '--vault-key-file'},
  /**
   * The manager's cooldowns (deployments/cooldowns.ts; unset, the network's defaults): a failed task's retry, a
   * task the vault cannot pay, and INFINITE's listing after rapid completions, each min(base x multiplier^n, max),
   * divided by a deployment's time_scale; the streak of rapid rounds at which the fail-safe stops a deployment.
   */
  managerRetryCooldownBase: {env: 'GPUNET_MANAGER_RETRY_COOLDOWN_BASE', kind: 'cooldown'},
  managerRetryCooldownMax: {env: 'GPUNET_MANAGER_RETRY_COOLDOWN_MAX', kind: 'cooldown'},
  managerRetryCooldownMultiplier: {env: 'GPUNET_MANAGER_RETRY_COOLDOWN_MULTIPLIER', kind: 'multiplier'},
  managerFundsCooldownBase: {env: 'GPUNET_MANAGER_FUNDS_COOLDOWN_BASE', kind: 'cooldown'},
  managerFundsCooldownMax: {env: 'GPUNET_MANAGER_FUNDS_COOLDOWN_MAX', kind: 'cooldown'},
  managerFundsCooldownMultiplier: {env: 'GPUNET_MANAGER_FUNDS_COOLDOWN_MULTIPLIER', kind: 'multiplier'},
  managerRapidCooldownBase: {env: 'GPUNET_MANAGER_RAPID_COOLDOWN_BASE', kind: 'cooldown'},
  managerRapidCooldownMax: {env: 'GPUNET_MANAGER_RAPID_COOLDOWN_MAX', kind: 'cooldown'},
  managerRapidCooldownMultiplier: {env: 'GPUNET_MANAGER_RAPID_COOLDOWN_MULTIPLIER', kind: 'multiplier'},
  managerRapidMaxStreak: {env: 'GPUNET_MANAGER_RAPID_MAX_STREAK', kind: 'streak'},
  /**
   * A deployment manager's tunnel grace (the network's FRPS_UNHEALTHY_GRACE_MS): how long an INFINITE job's lost
   * tunnel may stay lost before the job is stopped and replaced, before its deployment's time_scale; unset: 60 s.
   */
  tunnelGrace: {env: 'GPUNET_TUNNEL_GRACE', kind: 'duration'},
  /**
   * The localnet's drain bound: how long a replica retired (a rotation, a replacement, a scale-down) keeps the
   * requests and streams open to it through its stable URL before its job stops and cuts them, before its
   * deployment's time_scale; unset: 10 minutes.
   */
  drainTimeout: {env: 'GPUNET_DRAIN_TIMEOUT', kind: 'drain', flag: '--drain-timeout'},
  /**
   * The localnet gateway's bounds on requests held at a stable URL while a deployment starts from zero: how many per
   * deployment (unset: 100) and how long each (unset: 120 s); past either, 503 with Retry-After.
   */
  maxHeld: {env: 'GPUNET_MAX_HELD', kind: 'held', flag: '--max-held'},
  holdTimeout: {env: 'GPUNET_HOLD_TIMEOUT', kind: 'hold', flag: '--hold-timeout'},
  /** `secrets serve`'s PostgreSQL; unset: the SQLite file in its data folder. */
  secretsDatabaseUrl: {env: 'GPUNET_SECRETS_DATABASE_URL', kind: 'text', flag: '--database-url', secret: true},
  /** The secrets service's master key (32 bytes, base64 or hex); unset: its key file, created on first start. */
  secretsKey: {env: 'GPUNET_SECRETS_KEY', kind: 'text', secret: true},
  /** Browser origins the local services answer besides their own (docs/localnet.md, "Web pages"). */
  allowOrigin: {env: 'GPUNET_ALLOW_ORIGIN', kind: 'origins'},
  /** Where the localnet keeps its chain, content and keys. */
  localnetDir: {
    env: 'GPUNET_LOCALNET_DIR',
    kind: 'path',
    flag: '--data-dir',
    preset: (_net, env = {}) => defaultDataDir(env),
  },
  /** The localnet's JSON-RPC port (the WebSocket takes the next one); 0 picks a free pair. */
  localnetPort: {env: 'GPUNET_LOCALNET_PORT', kind: 'rpcPort', flag: '--port', preset: () => String(DEFAULT_PORT)},
  localnetIds: {env: 'GPUNET_LOCALNET_IDS', kind: 'ids', flag: '--ids'},
  /** How many node agents `localnet start` runs (1..16; 1 when nothing sets it). */
  nodes: {env: 'GPUNET_LOCALNET_NODES', kind: 'nodes', flag: '--nodes', preset: () => '1'},
  /** The localnet's markets file (YAML or JSON, docs/localnet.md); unset: its markets as kept, else the defaults. */
  localnetMarkets: {env: 'GPUNET_LOCALNET_MARKETS', kind: 'path', flag: '--markets'},
  /** How fast a localnet node's simulated image pull goes, in MB/s. */
  pullRate: {env: 'GPUNET_LOCALNET_PULL_RATE', kind: 'positive', preset: () => '50'},
  /**
   * How many times faster than asked `--queue-timeout` passes on the localnet: 1 but in tests, whose queue timeouts
   * (at least a minute, as on every network) would otherwise take minutes. Refused on other networks.
   */
  queueTimeoutScale: {env: 'GPUNET_QUEUE_TIMEOUT_SCALE', kind: 'positive', preset: () => '1'},
  /** How many times faster than `pullRate` the simulated pulls go: 1 but in tests. */
  pullScale: {env: 'GPUNET_LOCALNET_PULL_SCALE', kind: 'positive', preset: () => '1'},
  /** The localnet's token price in USD, for its markets' USD prices (`/markets/price`). */
  tokenUsd: {env: 'GPUNET_LOCALNET_TOKEN_USD', kind: 'positive', preset: () => '0.5'},
  /** The most bytes the localnet's content store keeps on disk (2 GiB when nothing sets it). */
  contentStoreMaxBytes: {env: 'GPUNET_CONTENT_MAX_BYTES', kind: 'bytes', flag: '--content-max-bytes'},
  /** The port of the localnet's gateway; unset, it follows the RPC port (+81). */
  gatewayPort: {env: 'GPUNET_GATEWAY_PORT', kind: 'port', flag: '--gateway-port'},
  /** The port of the gateway's https side; unset, it follows the gateway's port (+1). */
  gatewayHttpsPort: {env: 'GPUNET_GATEWAY_HTTPS_PORT', kind: 'port', flag: '--gateway-https-port'},
  /** The GPUs the localnet's nodes say they have; unset, detected from /dev/nvidia*. */
  nodeGpus: {env: 'GPUNET_NODE_GPUS', kind: 'gpus', flag: '--gpus'},
  nodeRuntime: {env: 'GPUNET_NODE_RUNTIME', kind: 'runtime', flag: '--runtime', preset: () => 'auto'},
  nodePull: {env: 'GPUNET_NODE_PULL', kind: 'pull', flag: '--pull', preset: () => 'missing'},
  /** Without podman, run jobs as plain host processes (NO isolation). */
  nodeHostProcesses: {env: 'GPUNET_NODE_HOST_PROCESSES', kind: 'boolean', flag: '--host-processes'},
  /** The Hugging Face endpoint the localnet's nodes fetch HF resources from (tests point it at 127.0.0.1). */
  hfEndpoint: {env: 'GPUNET_HF_ENDPOINT', kind: 'url'},
} as const satisfies Record<string, SettingSpec>

/** The name of a setting: a key of `gpunet config` and of the config file. */
export type SettingKey = keyof typeof SETTINGS

/** Every setting's name, in SETTINGS' order. */
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[]

/** The value a setting's kind reads its text into: a boolean for `priorityFee`, lamports for `maxPriorityFee`. */
export type SettingValue<K extends SettingKey> = KindValue<(typeof SETTINGS)[K]['kind']>

/** Whether a setting is a credential (never printed, never an argument of `config set`). */
export function isSecretSetting(key: string): boolean {
  return Object.hasOwn(SETTINGS, key) && (SETTINGS[key as SettingKey] as SettingSpec).secret === true
}

/** The credentials among the settings, for help texts: `pinataJwt, managerApiKey, …`. */
export const SECRET_SETTINGS: readonly SettingKey[] = SETTING_KEYS.filter(isSecretSetting)
