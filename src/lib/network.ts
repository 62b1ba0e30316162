import {activeProfile, configFile, networkConfig, type NetworkConfig, profileConfig} from './config.js'
import {ExitCode, GpunetError} from './errors.js'

/** The networks gpunet talks to; localnet is the default so nobody spends real tokens by accident. */
export const NETWORKS = ['localnet', 'devnet', 'mainnet'] as const
export type Network = (typeof NETWORKS)[number]

/**
 * The network of a command: `--network` (or `GPUNET_NETWORK`, which oclif reads into it), else the active
 * profile's, else localnet. A profile is for one network, so a different `--network` with it is a usage error
 * rather than a silent mix of the two; `announce` is told the profile in use, so a mainnet profile never acts
 * unseen.
 */
export function resolveNetwork(
  given: string | undefined,
  announce: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Network {
  const active = activeProfile(env)
  if (!active) return (given as Network | undefined) ?? 'localnet'
  const {name, profile} = active
  if (!(NETWORKS as readonly string[]).includes(profile.network)) {
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
  announce(`Profile ${name}: ${profile.network}`)
  return profile.network as Network
}

/** The secrets service URL the user set (flag > `GPUNET_SECRETS_URL` > profile > config file), if any. */
export function configuredSecretsUrl(
  network: Network,
  flag?: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const url = settingValue(network, {key: 'secretsUrl', env: 'GPUNET_SECRETS_URL'}, flag, env)
  return url ? checkUrl(url) : undefined
}

function checkUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new GpunetError('secrets_url_invalid', `the secrets service URL "${url}" is not a URL`, {
      exitCode: ExitCode.USAGE,
      hint: 'use a full URL such as http://127.0.0.1:8787',
    })
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new GpunetError('secrets_url_invalid', `the secrets service URL "${url}" must use http or https`, {
      exitCode: ExitCode.USAGE,
    })
  }
  return url.replace(/\/+$/, '')
}

/** A setting of a network: flag > `GPUNET_*` environment variable > profile > config file; the env name documents it. */
export interface Setting {
  key: keyof NetworkConfig
  env: string
  flag?: string
}

/** The value of a setting, if set anywhere (flag > environment > profile > config file), and where it came from. */
export function settingSource(
  network: Network,
  setting: Setting,
  flagValue?: string,
  env: NodeJS.ProcessEnv = process.env,
): {value: string; from: 'flag' | 'env' | 'profile' | 'config'} | undefined {
  if (flagValue) return {value: flagValue, from: 'flag'}
  if (env[setting.env]) return {value: env[setting.env]!, from: 'env'}
  const inProfile = profileConfig(network, env)[setting.key]
  if (inProfile) return {value: inProfile, from: 'profile'}
  const inFile = networkConfig(network, env)[setting.key]
  return inFile ? {value: inFile, from: 'config'} : undefined
}

/** The value of a setting, if set anywhere (flag > environment > profile > config file). */
export function settingValue(
  network: Network,
  setting: Setting,
  flagValue?: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  return settingSource(network, setting, flagValue, env)?.value
}

/** The value of a required setting, or a usage error that names every way to set it. */
export function requireSetting(
  network: Network,
  setting: Setting,
  flagValue?: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const value = settingValue(network, setting, flagValue, env)
  if (value) return value
  const ways = [setting.flag ? `pass ${setting.flag}` : undefined, `set ${setting.env}`].filter(Boolean).join(', ')
  throw new GpunetError(`${snake(setting.key)}_missing`, `no ${setting.key} is configured for ${network}`, {
    exitCode: ExitCode.USAGE,
    hint: `${ways}, or run \`gpunet config set ${setting.key} VALUE --network ${network}\` (written to ${configFile(env)})`,
  })
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
}
