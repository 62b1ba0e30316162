/**
 * The one resolver of a command's settings: each setting's value in force and where it comes from, by
 * flag > environment (GPUNET_*) > profile > config file > preset. A command resolves them once (BaseCommand),
 * reading the config file once, and hands the result down: the layers below take typed values (each read by its
 * kind, kinds.ts), never flags, text to parse or `process.env`. The settings themselves are catalog.ts' SETTINGS.
 */

import {type SettingKey, SETTING_KEYS, SETTINGS, type SettingSpec, type SettingValue} from './catalog.js'
import {type ConfigDocument, configFile, type NetworkConfig, type Profile, readConfigFile} from './config.js'
import {readKind} from './kinds.js'
import {ExitCode, GpunetError} from '../errors.js'
import {type InForce, type Network, NETWORKS, type Typed} from '../network.js'
import {configDir, dataDir} from '../keys/private-file.js'

// The wallet file the settings choose: defined beside the key's loading (web3-free), so wallet.ts need not import
// this module.
export {walletPath} from '../keys/wallet-key.js'

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
  /** What a relative path setting is taken from (default: the working directory). */
  cwd?: string
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
  /** gpunet's data folder (`$XDG_DATA_HOME/gpunet`): the failover journal lives there. */
  readonly dataDir: string
  /** The profiles the config file holds (for `config list`). */
  readonly profiles: {name: string; network: string}[]
  /** Where the local network keeps its files and its RPC port (the localnetDir and localnetPort settings). */
  readonly localnet: {dataDir: string; port: number}
  /**
   * A setting in force, read by its kind (a boolean, lamports, a port…), with where it comes from; undefined when
   * nothing sets it. A value its kind refuses is exit 2 naming the setting and where it is set.
   */
  typed<K extends SettingKey>(key: K): Typed<SettingValue<K>> | undefined
  /** A setting in force as text, with where it comes from; undefined when nothing sets it. */
  get(key: SettingKey): InForce | undefined
  /** A setting's text in force; undefined when nothing sets it. */
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
  // Read on first use, so that a bad value fails the commands that take it, not `config list` that shows it.
  const typed = new Map<SettingKey, Typed<unknown>>()
  const typedValue = <K extends SettingKey>(key: K): Typed<SettingValue<K>> | undefined => {
    const found = values.get(key)
    if (!found) return undefined
    if (!typed.has(key)) typed.set(key, readSetting(key, found, input.cwd ?? process.cwd()))
    return typed.get(key) as Typed<SettingValue<K>>
  }
  return {
    network,
    profile: profile?.name ?? null,
    configFile: file,
    configDir: configDir(env),
    dataDir: dataDir(env),
    profiles: Object.entries(document.profiles).map(([name, {network: of}]) => ({name, network: of})),
    get localnet() {
      return {dataDir: typedValue('localnetDir')!.value, port: typedValue('localnetPort')!.value}
    },
    typed: typedValue,
    get: (key) => values.get(key),
    value: (key) => values.get(key)?.value,
    envName: (key) => SETTINGS[key].env,
  }
}

/** A setting's text read by its kind; a text its kind refuses is exit 2, with where to fix it. */
function readSetting<K extends SettingKey>(key: K, found: InForce, cwd: string): Typed<SettingValue<K>> {
  const reading = readKind(SETTINGS[key].kind, found.value, cwd)
  if ('value' in reading) {
    return {value: reading.value as SettingValue<K>, text: found.value, from: found.from, source: found.source}
  }
  throw invalidSetting(key, found, reading.why)
}

/**
 * The error of a setting whose text its kind refuses: `<key>_invalid`, exit 2. A flag's value is named in the
 * message; one set elsewhere gets a hint naming where to fix it.
 */
function invalidSetting(key: SettingKey, found: Pick<InForce, 'value' | 'source'>, why: string): GpunetError {
  const spec: SettingSpec = SETTINGS[key]
  const shown = spec.secret ? '(hidden)' : JSON.stringify(found.value)
  const code = `${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}_invalid`
  const message =
    found.source === 'flag' ? `${spec.flag ?? key} must be ${why}, not ${shown}` : `${key} must be ${why}, not ${shown}`
  return new GpunetError(code, message, {
    exitCode: ExitCode.USAGE,
    hint:
      found.source === 'flag'
        ? undefined
        : `fix it where it is set (${found.source}); \`gpunet config list\` shows every setting`,
    fields: {setting: key, source: found.source},
  })
}

/** The localnet's data folder as every command finds it (GPUNET_LOCALNET_DIR, the config file, else the default). */
export function localnetDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolveSettings({network: 'localnet', env}).localnet.dataDir
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
  const preset = spec.preset?.(network, env) ?? null
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
