/**
 * What `gpunet config` does with the settings of settings.ts: checks a key and its value, writes it into a scope
 * of the config file, and lists every setting in force with where it comes from, as the one resolver found them.
 */
import {type ConfigDocument, type NetworkConfig} from './config.js'
import {type Kind, KINDS, readKind} from './kinds.js'
import {ExitCode, GpunetError} from '../errors.js'
import type {Network} from '../network.js'
import {isSecretSetting, type SettingKey, SETTING_KEYS, SETTINGS, type SettingSpec} from './catalog.js'
import type {Settings} from './settings.js'

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
export function checkKey(key: string, scope: ConfigScope): SettingSpec {
  const info: SettingSpec | undefined = Object.hasOwn(SETTINGS, key) ? SETTINGS[key as SettingKey] : undefined
  if (!info) {
    const lower = key.toLowerCase().replace(/[-_]/g, '')
    const near = SETTING_KEYS.find((known) => known.toLowerCase() === lower)
    throw new GpunetError('config_key_unknown', `there is no setting named ${key}`, {
      exitCode: ExitCode.USAGE,
      hint: near ? `did you mean ${near}?` : `settings: ${SETTING_KEYS.join(', ')}`,
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

/**
 * A value read by its setting's kind and written back as `config set` stores it (an address in its one spelling, a
 * path made absolute, a boolean as true or false); a value its kind refuses is exit 2.
 */
export function checkValue(key: string, value: string, cwd = process.cwd()): string {
  const {kind} = SETTINGS[key as SettingKey]
  const bad = (why: string) =>
    new GpunetError('config_value_invalid', `${key} ${why}`, {
      exitCode: ExitCode.USAGE,
      hint: 'see `gpunet config --help`',
    })
  if (value === '') throw bad('cannot be empty: `gpunet config unset` removes a setting')
  const reading = readKind(kind, value, cwd)
  if (!('value' in reading))
    throw bad(`must be ${reading.why}, not ${isSecretSetting(key) ? '(hidden)' : JSON.stringify(value)}`)
  return (KINDS[kind] as Kind<unknown>).write(reading.value)
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

/** Every setting in force for a command (`config list`, `config get`), from the settings it resolved once. */
export function settingsInForce(settings: Settings): SettingInForce[] {
  return SETTING_KEYS.map((key) => {
    const found = settings.get(key)
    return {
      key,
      value: found && !isSecretSetting(key) ? found.value : null,
      set: found !== undefined,
      source: found?.source ?? null,
      env: SETTINGS[key].env,
    }
  })
}
