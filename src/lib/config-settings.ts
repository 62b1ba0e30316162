/**
 * The settings `gpunet config` reads and writes: each key with its environment variable, its check and its preset,
 * and where the value in force comes from (flag > environment > profile > config file > preset).
 */
import {PublicKey} from '@solana/web3.js'
import {isAbsolute, resolve} from 'node:path'

import {
  activeProfile,
  type ConfigDocument,
  HIDDEN_KEYS,
  type NetworkConfig,
  type Profile,
  readConfig,
} from './config.js'
import {ExitCode, GpunetError} from './errors.js'
import {IDS_SETTING, isLocalnetIds, LOCALNET_IDS} from './localnet/ids.js'
import {SETTINGS} from './market/connect.js'
import {NETWORK_PRESETS} from './market/networks.js'
import {type Network, NETWORKS, settingSource} from './network.js'

type Kind = 'url' | 'address' | 'boolean' | 'sol' | 'network' | 'path' | 'host' | 'text' | 'bytes' | 'ids'

interface KeyInfo {
  env: string
  kind: Kind
  /** Only a profile holds it (its network, its wallet). */
  profileOnly?: boolean
}

/** Every key `gpunet config` knows, with its environment variable and the kind of value it takes. */
export const CONFIG_KEYS: Record<string, KeyInfo> = {
  network: {env: 'GPUNET_NETWORK', kind: 'network', profileOnly: true},
  wallet: {env: 'GPUNET_WALLET', kind: 'path', profileOnly: true},
  rpcUrl: {env: SETTINGS.rpcUrl.env, kind: 'url'},
  secretsUrl: {env: 'GPUNET_SECRETS_URL', kind: 'url'},
  market: {env: SETTINGS.market.env, kind: 'address'},
  contentStoreUrl: {env: SETTINGS.contentStoreUrl.env, kind: 'url'},
  pinataJwt: {env: SETTINGS.pinataJwt.env, kind: 'text'},
  pinningServiceUrl: {env: SETTINGS.pinningServiceUrl.env, kind: 'url'},
  ipfsGateway: {env: SETTINGS.ipfsGateway.env, kind: 'url'},
  networkHost: {env: SETTINGS.networkHost.env, kind: 'host'},
  priorityFee: {env: SETTINGS.priorityFee.env, kind: 'boolean'},
  maxPriorityFee: {env: SETTINGS.maxPriorityFee.env, kind: 'sol'},
  rewardsReflection: {env: SETTINGS.rewardsReflection.env, kind: 'address'},
  rewardsVault: {env: SETTINGS.rewardsVault.env, kind: 'address'},
  rewardsProgram: {env: SETTINGS.rewardsProgram.env, kind: 'address'},
  nodeApiUrl: {env: SETTINGS.nodeApiUrl.env, kind: 'text'},
  indexerUrl: {env: SETTINGS.indexerUrl.env, kind: 'url'},
  maxContentBytes: {env: SETTINGS.maxContentBytes.env, kind: 'bytes'},
  localnetIds: {env: IDS_SETTING.env, kind: 'ids'},
  manager: {env: 'GPUNET_MANAGER_URL', kind: 'url'},
  managerApiKey: {env: 'GPUNET_MANAGER_API_KEY', kind: 'text'},
}

/** Where `config set/unset/get/list` act: a named profile, or a network's section of the config file. */
export type ConfigScope = {profile: string} | {network: Network}

/** The scope of a config command: `--profile` (or `GPUNET_PROFILE`), else `--network`'s section. */
export function configScope(profile: string | undefined, network: string): ConfigScope {
  return profile ? {profile} : {network: network as Network}
}

/** The scope's name as the messages show it. */
export function scopeName(scope: ConfigScope): string {
  return 'profile' in scope ? `profile ${scope.profile}` : `networks.${scope.network}`
}

/** A key `gpunet config` knows, or exit 2 with the closest one. */
export function checkKey(key: string, scope: ConfigScope): KeyInfo {
  const info = Object.hasOwn(CONFIG_KEYS, key) ? CONFIG_KEYS[key] : undefined
  if (!info) {
    const lower = key.toLowerCase().replace(/[-_]/g, '')
    const near = Object.keys(CONFIG_KEYS).find((known) => known.toLowerCase() === lower)
    throw new GpunetError('config_key_unknown', `there is no setting named ${key}`, {
      exitCode: ExitCode.USAGE,
      hint: near ? `did you mean ${near}?` : `settings: ${Object.keys(CONFIG_KEYS).join(', ')}`,
    })
  }
  if (info.profileOnly && !('profile' in scope)) {
    throw new GpunetError('config_key_profile_only', `${key} is set per profile, not per network`, {
      exitCode: ExitCode.USAGE,
      hint: `pass --profile NAME: \`gpunet config set ${key} … --profile NAME\``,
    })
  }
  return info
}

/** A value checked (and a wallet path made absolute) for `key`; a bad one is exit 2. */
export function checkValue(key: string, value: string, cwd = process.cwd()): string {
  const {kind} = CONFIG_KEYS[key]!
  const bad = (why: string) =>
    new GpunetError('config_value_invalid', `${key} ${why}`, {
      exitCode: ExitCode.USAGE,
      hint: 'see `gpunet config --help`',
    })
  if (value === '') throw bad('cannot be empty: `gpunet config unset` removes a setting')
  switch (kind) {
    case 'url': {
      let url: URL
      try {
        url = new URL(value)
      } catch {
        throw bad(`must be a URL such as https://example.org, not "${value}"`)
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('must be an http or https URL')
      return value
    }
    case 'address':
      try {
        return new PublicKey(value).toBase58()
      } catch {
        throw bad(`must be a base58 Solana address, not "${value}"`)
      }
    case 'boolean':
      if (value !== 'true' && value !== 'false') throw bad('must be true or false')
      return value
    case 'sol':
      if (!/^\d+(\.\d{1,9})?$/.test(value)) throw bad(`must be an amount of SOL such as 0.001, not "${value}"`)
      return value
    case 'network':
      if (!(NETWORKS as readonly string[]).includes(value)) throw bad(`must be one of ${NETWORKS.join(', ')}`)
      return value
    case 'host':
      if (!/^[a-z0-9.-]+(:\d+)?$/i.test(value)) throw bad(`must be a host name such as k8s.dev.nos.ci, not "${value}"`)
      return value
    case 'path':
      return isAbsolute(value) ? value : resolve(cwd, value)
    case 'ids':
      if (!isLocalnetIds(value)) throw bad(`must be one of ${LOCALNET_IDS.join(', ')}`)
      return value
    case 'bytes':
      if (!/^\d{4,15}$/.test(value) || Number(value) < 1024) throw bad(`must be a number of bytes, at least 1024`)
      return value
    default:
      return value
  }
}

/** Sets (or with `value` undefined, removes) `key` in the scope of a config document, which it changes. */
export function applySetting(
  document: ConfigDocument,
  scope: ConfigScope,
  key: string,
  value: string | undefined,
): void {
  if ('profile' in scope) {
    const existing = Object.hasOwn(document.profiles, scope.profile) ? document.profiles[scope.profile] : undefined
    if (!existing) {
      if (value === undefined) return
      if (key !== 'network') {
        throw new GpunetError('profile_not_found', `there is no profile named ${scope.profile} yet`, {
          exitCode: ExitCode.USAGE,
          hint: `a profile starts with its network: \`gpunet config set network devnet --profile ${scope.profile}\``,
        })
      }
      setMember(document.profiles, scope.profile, {network: value})
      return
    }
    if (value === undefined && key === 'network') {
      throw new GpunetError('config_key_required', `a profile needs its network; ${scope.profile} keeps it`, {
        exitCode: ExitCode.USAGE,
        hint: `remove the whole profile with \`gpunet config unset --profile ${scope.profile}\``,
      })
    }
    setMember(existing, key, value)
    return
  }
  const section: NetworkConfig = Object.hasOwn(document.networks, scope.network)
    ? document.networks[scope.network]!
    : {}
  setMember(section, key, value)
  if (Object.keys(section).length > 0) setMember(document.networks, scope.network, section)
  else delete document.networks[scope.network]
}

/** Sets or deletes a member; defined, not assigned, so that a name such as __proto__ stays an own member. */
function setMember(target: object, key: string, value: unknown): void {
  const record = target as Record<string, unknown>
  if (value === undefined) delete record[key]
  else Object.defineProperty(record, key, {value, enumerable: true, writable: true, configurable: true})
}

/** One setting in force: its value (null when hidden or unset), whether it is set, and where it comes from. */
export interface SettingInForce {
  key: string
  value: string | null
  set: boolean
  /** `env GPUNET_…`, `profile NAME`, `config networks.NET`, `preset`, or null when nothing sets it. */
  source: string | null
  env: string
}

/** Every setting in force on `network` (with the active profile, if any), from flag-free sources. */
export function settingsInForce(network: Network, env: NodeJS.ProcessEnv = process.env): SettingInForce[] {
  const profile = activeProfile(env)
  const rows: SettingInForce[] = []
  for (const [key, info] of Object.entries(CONFIG_KEYS)) {
    const found = locate(network, key, info, profile, env)
    const hidden = HIDDEN_KEYS.has(key)
    rows.push({
      key,
      value: found && !hidden ? found.value : null,
      set: found !== undefined,
      source: found?.source ?? null,
      env: info.env,
    })
  }
  return rows
}

function locate(
  network: Network,
  key: string,
  info: KeyInfo,
  profile: {name: string; profile: Profile} | undefined,
  env: NodeJS.ProcessEnv,
): {value: string; source: string} | undefined {
  if (key === 'network') {
    if (env.GPUNET_NETWORK) return {value: env.GPUNET_NETWORK, source: 'env GPUNET_NETWORK'}
    if (profile) return {value: profile.profile.network, source: `profile ${profile.name}`}
    return {value: network, source: network === 'localnet' ? 'default' : 'flag'}
  }
  if (key === 'wallet') {
    if (env.GPUNET_WALLET) return {value: env.GPUNET_WALLET, source: 'env GPUNET_WALLET'}
    if (profile?.profile.wallet) return {value: profile.profile.wallet, source: `profile ${profile.name}`}
    return undefined
  }
  const found = settingSource(network, {key: key as keyof NetworkConfig, env: info.env}, undefined, env)
  if (found) {
    const source = {
      flag: 'flag',
      env: `env ${info.env}`,
      profile: `profile ${profile?.name}`,
      config: `config networks.${network}`,
    }[found.from]
    return {value: found.value, source}
  }
  const preset = presetValue(network, key)
  return preset === null ? undefined : {value: preset, source: 'preset'}
}

function presetValue(network: Network, key: string): string | null {
  const preset = NETWORK_PRESETS[network]
  switch (key) {
    case 'rpcUrl':
      return preset.rpcUrl
    case 'secretsUrl':
      return preset.secretsUrl
    case 'market':
      return preset.market?.toBase58() ?? null
    case 'ipfsGateway':
      return preset.ipfsGateway
    case 'rewardsProgram':
      return preset.rewardsProgram?.toBase58() ?? null
    case 'indexerUrl':
      return preset.indexerUrl
    case 'priorityFee':
      return network === 'localnet' ? null : String(preset.priorityFeeByDefault)
    default:
      return null
  }
}

/** The config document as read, for `config list`'s profile names. */
export function configuredProfiles(env: NodeJS.ProcessEnv = process.env): {name: string; network: string}[] {
  return Object.entries(readConfig(env).profiles).map(([name, profile]) => ({name, network: profile.network}))
}
