import {configFile, networkConfig, type NetworkConfig} from './config.js'
import {ExitCode, GpunetError} from './errors.js'

/** The networks gpunet talks to; localnet is the default so nobody spends real tokens by accident. */
export const NETWORKS = ['localnet', 'devnet', 'mainnet'] as const
export type Network = (typeof NETWORKS)[number]

/** The secrets service URL the user set (flag > `GPUNET_SECRETS_URL` > config file), if any. */
export function configuredSecretsUrl(
  network: Network,
  flag?: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const url = flag || env.GPUNET_SECRETS_URL || networkConfig(network, env).secretsUrl
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

/** A setting of a network: flag > `GPUNET_*` environment variable > config file; the env name documents it. */
export interface Setting {
  key: keyof NetworkConfig
  env: string
  flag?: string
}

/** The value of a setting, if set anywhere (flag > environment > config file). */
export function settingValue(
  network: Network,
  setting: Setting,
  flagValue?: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  return flagValue || env[setting.env] || networkConfig(network, env)[setting.key] || undefined
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
    hint: `${ways}, or set "networks": {"${network}": {"${setting.key}": "…"}} in ${configFile(env)}`,
  })
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
}
