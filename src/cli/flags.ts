import * as Flags from '@oclif/core/flags'

import {WAIT_POINTS} from '../lib/job/wait-point.js'
import {
  contentMaxBytesFlag,
  drainTimeoutFlag,
  holdTimeoutFlag,
  maxHeldFlag,
  dataDirFlag,
  idsFlag,
  marketsFlag,
  nodeFlags,
  nodesFlag,
  portFlag,
} from './localnet-flags.js'
import {NETWORKS} from '../lib/network.js'
import {type SettingKey, SETTINGS} from '../lib/settings/catalog.js'
import {readKind} from '../lib/settings/kinds.js'

/** The flags of every command that talks to a network: which network, which secrets service, which wallet. */
export const networkFlags = {
  network: Flags.string({
    // No oclif default or env: the settings resolver (BaseCommand) tells a given --network from GPUNET_NETWORK,
    // the profile's network and the default.
    description: "network to use [default: the profile's, else localnet; env: GPUNET_NETWORK]",
    options: [...NETWORKS],
  }),
  profile: Flags.string({
    description: 'named profile of settings (`gpunet config list --profile NAME`) [env: GPUNET_PROFILE]',
    helpValue: 'NAME',
  }),
  'secrets-url': Flags.string({
    description: 'secrets service URL (default: GPUNET_SECRETS_URL, then the config file)',
    helpValue: 'URL',
  }),
  wallet: Flags.string({
    description: 'Solana keypair file (default: GPUNET_WALLET, then ~/.config/gpunet/wallet.json)',
    helpValue: 'FILE',
  }),
  'allow-unbound-login': Flags.boolean({
    description:
      'sign the unbound service_secret_ login for a secrets service that advertises no message bound to its host (a signature another service of yours would take too; docs/secrets.md)',
  }),
}

/** The flags of the job commands that talk to the market: which network, which RPC node, which wallet. */
export const marketFlags = {
  network: networkFlags.network,
  profile: networkFlags.profile,
  rpc: Flags.string({
    description: 'Solana JSON-RPC URL (default: GPUNET_RPC_URL, then the config file, then the network preset)',
    helpValue: 'URL',
  }),
  'network-host': Flags.string({
    description:
      "host of exposed services on devnet/mainnet, https://<id>.node.<host> (default: GPUNET_NETWORK_HOST, the config file, then the network's: k8s.dev.nos.ci, k8s.prd.nos.ci)",
    helpValue: 'HOST',
  }),
  wallet: networkFlags.wallet,
  'priority-fee': Flags.boolean({
    description:
      'pay a priority fee (compute-unit price from recent fees on the accounts written) [default: on for mainnet only; GPUNET_PRIORITY_FEE]',
    allowNo: true,
  }),
  'max-priority-fee': Flags.string({
    description: 'most SOL one transaction pays as priority fee [default: 0.001; GPUNET_MAX_PRIORITY_FEE]',
    helpValue: 'SOL',
  }),
}

/** `--market` of the commands that post: the market setting (a filter such as `job list --market` is not it). */
export const marketFlag = Flags.string({
  description:
    "market address [default: GPUNET_MARKET, the profile's or the config file's, else the network's default market]",
  helpValue: 'ADDRESS',
})

/** `--ipfs-gateway` of `secrets serve`: the ipfsGateway setting. */
export const ipfsGatewayFlag = Flags.string({
  description:
    'IPFS gateway job definitions are read from, <gateway>/ipfs/<cid> (default: GPUNET_IPFS_GATEWAY, then the config file; on localnet the localnet’s own store)',
  helpValue: 'URL',
})

/** `--manager` of the deployment commands: the manager setting. */
export const managerFlag = Flags.string({
  description:
    "deployment manager URL (default: GPUNET_MANAGER_URL, the profile's or config file's manager, then the network's public API on devnet/mainnet, the localnet's own on localnet)",
  helpValue: 'URL',
})

/** `--api-key` of the commands that talk to a manager: the managerApiKey setting (GPUNET_API_KEY is safer). */
export const apiKeyFlag = Flags.string({
  description:
    "API key of the manager or the network's API, sent instead of the wallet's headers [default: GPUNET_API_KEY, then the managerApiKey setting]; a flag shows in process lists, the variable does not",
  helpValue: 'KEY',
})

/** `--database-url` of `deployment serve`: the managerDatabaseUrl setting. */
export const managerDatabaseUrlFlag = Flags.string({
  description:
    'PostgreSQL (postgres://…) that several managers share, instead of the SQLite file in --data-dir [env: GPUNET_MANAGER_DATABASE_URL, or the managerDatabaseUrl setting]',
  helpValue: 'URL',
})

/** `--database-url` of `secrets serve`: the secretsDatabaseUrl setting. */
export const secretsDatabaseUrlFlag = Flags.string({
  description:
    'PostgreSQL URL; replaces the SQLite file [env: GPUNET_SECRETS_DATABASE_URL, or the secretsDatabaseUrl setting]',
  helpValue: 'URL',
})

/** `--vault-key-file` of `deployment serve`: the managerVaultKeyFile setting. */
export const vaultKeyFileFlag = Flags.string({
  description:
    'the key that seals the vaults, the same on every manager of one database [default: <data-dir>/vaults.key; env: GPUNET_MANAGER_VAULT_KEY_FILE]',
  helpValue: 'FILE',
})

/**
 * Each shared flag that sets a setting, by the setting it sets. Only these feed the resolver, so a command's own
 * flag of the same name with another meaning (`job list --market`, a filter) is not taken for the setting.
 */
export const SETTING_FLAGS: Partial<Record<SettingKey, unknown>> = {
  network: networkFlags.network,
  wallet: networkFlags.wallet,
  secretsUrl: networkFlags['secrets-url'],
  rpcUrl: marketFlags.rpc,
  networkHost: marketFlags['network-host'],
  priorityFee: marketFlags['priority-fee'],
  maxPriorityFee: marketFlags['max-priority-fee'],
  market: marketFlag,
  ipfsGateway: ipfsGatewayFlag,
  manager: managerFlag,
  managerApiKey: apiKeyFlag,
  managerDatabaseUrl: managerDatabaseUrlFlag,
  managerVaultKeyFile: vaultKeyFileFlag,
  secretsDatabaseUrl: secretsDatabaseUrlFlag,
  localnetDir: dataDirFlag,
  localnetPort: portFlag,
  localnetIds: idsFlag,
  nodes: nodesFlag,
  localnetMarkets: marketsFlag,
  contentStoreMaxBytes: contentMaxBytesFlag,
  drainTimeout: drainTimeoutFlag,
  maxHeld: maxHeldFlag,
  holdTimeout: holdTimeoutFlag,
  gatewayPort: nodeFlags['gateway-port'],
  gatewayHttpsPort: nodeFlags['gateway-https-port'],
  nodeGpus: nodeFlags.gpus,
  nodeRuntime: nodeFlags.runtime,
  nodePull: nodeFlags.pull,
  nodeHostProcesses: nodeFlags['host-processes'],
}

/** The setting values a command's flags gave (settings.ts), from the shared setting flags it declares. */
export function settingFlagValues(
  declared: Record<string, unknown>,
  parsed: Record<string, unknown>,
): Partial<Record<SettingKey, string>> {
  const values: Partial<Record<SettingKey, string>> = {}
  for (const [key, flag] of Object.entries(SETTING_FLAGS) as [SettingKey, unknown][]) {
    const name = (SETTINGS[key] as {flag?: string}).flag?.replace(/^--/, '')
    if (name === undefined || declared[name] !== flag) continue
    const value = parsed[name]
    if (value !== undefined && value !== '') values[key] = String(value)
  }
  return values
}

/**
 * The flags of the job commands that read a job and talk to its node as its poster (get, logs, stats, exec, shell,
 * restart): which network, which RPC node, where nodes serve, which wallet.
 */
export const jobNodeFlags = {
  network: marketFlags.network,
  profile: marketFlags.profile,
  rpc: marketFlags.rpc,
  'network-host': marketFlags['network-host'],
  wallet: marketFlags.wallet,
}

/**
 * A flag of whole seconds, read by the seconds kind (settings/kinds.ts): a duration (`90s`, `10m`, `2h`) or a bare
 * number of seconds, as these flags always took; at least `min` (1 unless given).
 */
export function secondsFlag(options: {description: string; default?: number; required?: boolean; min?: number}) {
  const min = options.min ?? 1
  const base = {
    description: `${options.description}: a duration such as 90s, 10m or 2h, or a number of seconds`,
    helpValue: 'DURATION',
    async parse(input: string): Promise<number> {
      const reading = readKind('seconds', input)
      if (!('value' in reading)) throw new Error(`must be ${reading.why}, not ${JSON.stringify(input)}`)
      if (reading.value < min) throw new Error(`must be at least ${min} s, not ${JSON.stringify(input)}`)
      return reading.value
    },
  }
  if (options.required) return Flags.custom<number>({...base, required: true})()
  if (options.default !== undefined) {
    return Flags.custom<number>({...base, default: options.default, defaultHelp: async () => `${options.default}s`})()
  }
  return Flags.custom<number>(base)()
}

/** The words before the first `--` (gpunet's) and after it (a command's, exactly as given): `job run`, `job exec`. */
export function splitCommand(argv: readonly string[]): {flagWords: string[]; command: string[]} {
  const dashes = argv.indexOf('--')
  if (dashes === -1) return {flagWords: [...argv], command: []}
  return {flagWords: argv.slice(0, dashes), command: argv.slice(dashes + 1)}
}

/** `--wait`, where it stops and its bound. */
export const waitFlags = {
  wait: Flags.boolean({
    description:
      'follow the job (spinner on stderr) until --wait-for; exit 8 if it ends failed, 9 if stopped, 130 on Ctrl+C (the job goes on)',
  }),
  'wait-for': Flags.string({
    description:
      'where --wait stops: running, ready (its exposed services answer their health checks) or done, in either case [default: ready for a job exposing ports, else done]; implies --wait',
    options: [...WAIT_POINTS],
    helpValue: 'POINT',
  }),
  logs: Flags.boolean({
    description:
      "with --wait, print the job's live output on stderr as `[op] line` (its poster's wallet reads it from the node) [default: on]",
    allowNo: true,
    default: true,
  }),
  'wait-timeout': secondsFlag({description: 'how long --wait follows the job before it exits 124', default: 1800}),
}

/** The flags of the deployment commands: which network, which manager, which wallet (the owner). */
export const deploymentFlags = {
  network: networkFlags.network,
  profile: networkFlags.profile,
  manager: managerFlag,
  'api-key': apiKeyFlag,
  wallet: networkFlags.wallet,
}

/**
 * The autoscaling policy and budget of `deployment create` and `deployment autoscale` (docs/deployments.md,
 * "Autoscaling"); read and checked by lib/deployments/client/client-autoscale.ts (exit 2 for a bad one).
 */
export const autoscaleFlags = {
  'min-replicas': Flags.integer({
    description: "autoscaling: the fewest replicas (0 scales to zero when idle, gpunet's manager only) [default: 1]",
    helpValue: 'N',
  }),
  'max-replicas': Flags.integer({description: 'autoscaling: the most replicas (at most 100)', helpValue: 'M'}),
  'target-concurrency': Flags.string({
    description: 'autoscaling: the in-flight requests one replica takes (above 0); more scales up at once',
    helpValue: 'C',
  }),
  'scale-down-after': Flags.string({
    description:
      'autoscaling: how long the load must fit in one replica less (at 70% of target) before one is scaled away, at least 10s [default: 5m]',
    helpValue: 'DURATION',
  }),
  budget: Flags.string({
    description: 'the most tokens the deployment may spend: no listing or extension takes it past; at it, it stops',
    helpValue: 'AMOUNT',
  }),
}

/**
 * What a job needs of a market, instead of `--market` (docs/jobs.md, "Placement"): `job post`, `job run` and
 * `deployment create`. Values are read and checked by lib/job/placing.ts (exit 2 for a bad one).
 */
export const placementFlags = {
  'gpu-model': Flags.string({
    description:
      "place the job on a market with this GPU model (the network's name, any case; repeat for any of several)",
    helpValue: 'MODEL',
    multiple: true,
  }),
  'min-vram': Flags.string({
    description:
      "place the job on a market whose lowest VRAM is at least this many GB (the definition's required_vram counts too)",
    helpValue: 'GB',
  }),
  'max-price': Flags.string({
    description:
      'place the job on a market costing at most this per hour: in the token, or in USD with the network fee under --credits',
    helpValue: 'PRICE',
  }),
  'market-type': Flags.string({
    description: 'place the job on a market of this type',
    options: ['premium', 'community'],
  }),
  strict: Flags.boolean({
    description: 'with --market and a need: refuse (exit 3) a market that does not fit, instead of a warning',
  }),
}

/** The need of the placement flags, for lib/job/placing.ts. */
export function needOfFlags(flags: {
  'gpu-model'?: string[]
  'min-vram'?: string
  'max-price'?: string
  'market-type'?: string
  strict?: boolean
}): {gpuModels?: string[]; minVram?: string; maxPrice?: string; marketType?: string; strict?: boolean} {
  return {
    gpuModels: flags['gpu-model'],
    minVram: flags['min-vram'],
    maxPrice: flags['max-price'],
    marketType: flags['market-type'],
    strict: flags.strict,
  }
}
