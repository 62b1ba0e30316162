/**
 * The config file, `~/.config/gpunet/config.json` (mode 0600: it may hold a pinning JWT). Version 2 holds the
 * per-network settings (`networks`, the "config file" layer) and named profiles (`profiles`, a layer above it,
 * chosen with `--profile` or `GPUNET_PROFILE`). A version 1 file (no `version`: `networks` only) is read as
 * version 2 and rewritten as such, with a `.v1.bak` copy, at the first change: nothing of it is dropped.
 */
import {chmodSync, constants, copyFileSync, existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {ExitCode, GpunetError} from '../errors.js'
import {configDir, writePrivateFile} from '../keys/private-file.js'
import type {SettingKey} from './catalog.js'

/**
 * What the config file may set per network (and a profile for its network), below flags and environment variables:
 * every setting of catalog.ts but the profile's own two, each as the text its kind reads.
 */
export type NetworkConfig = Partial<Record<Exclude<SettingKey, 'network' | 'wallet'>, string>>

/** A named profile: a network, and the settings and wallet to use on it. */
export interface Profile extends NetworkConfig {
  network: string
  /** The wallet's keypair file. */
  wallet?: string
}

/** The config file's document, as version 2. Members it does not know are kept as they are. */
export interface ConfigDocument {
  version: 2
  networks: Record<string, NetworkConfig>
  profiles: Record<string, Profile>
  [other: string]: unknown
}

/** The config file's path: `$XDG_CONFIG_HOME/gpunet/config.json` or `~/.config/gpunet/config.json`. */
export function configFile(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'config.json')
}

/** The config file's document (version 2; an empty one when there is no file); a malformed file is exit 3. */
export function readConfig(env: NodeJS.ProcessEnv): ConfigDocument {
  return readConfigFile(configFile(env))
}

/** The document of the config file at `file`, as readConfig reads it (settings.ts reads it once per command). */
export function readConfigFile(file: string): ConfigDocument {
  return loadConfig(file).document
}

/**
 * Writes the config file (0600, atomically). A version 1 file is first copied to `config.json.v1.bak`, so the
 * migration can be undone by hand.
 */
export async function writeConfig(document: ConfigDocument, env: NodeJS.ProcessEnv): Promise<void> {
  const file = configFile(env)
  const {version} = loadConfig(file)
  if (version === 1) {
    const backup = `${file}.v1.bak`
    if (!existsSync(backup)) {
      copyFileSync(file, backup, constants.COPYFILE_EXCL)
      chmodSync(backup, 0o600)
    }
  }
  await writePrivateFile(file, `${JSON.stringify(document, null, 2)}\n`)
}

function loadConfig(file: string): {document: ConfigDocument; version: 0 | 1 | 2} {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return {document: {version: 2, networks: {}, profiles: {}}, version: 0}
  }
  const invalid = (why: string) =>
    new GpunetError('config_invalid', `${file} ${why}`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint: 'fix or remove the file (`gpunet config list` shows what gpunet reads)',
    })
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw invalid('is not valid JSON')
  }
  if (!isObject(value)) throw invalid('is not a JSON object')
  const {version = 1, networks = {}, profiles = {}, ...other} = value
  if (version !== 1 && version !== 2)
    throw invalid(`has version ${JSON.stringify(version)}, which this gpunet does not know`)
  if (!isSectionOf(networks, isSettings))
    throw invalid('has a "networks" member that is not {"<network>": {"<key>": "<text>"}}')
  if (!isSectionOf(profiles, isProfile)) {
    throw invalid('has a "profiles" member that is not {"<name>": {"network": "…", "<key>": "<text>"}}')
  }
  return {document: {version: 2, ...other, networks, profiles}, version}
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isSettings(value: unknown): value is NetworkConfig {
  return isObject(value) && Object.values(value).every((member) => typeof member === 'string')
}

function isProfile(value: unknown): value is Profile {
  return isSettings(value) && typeof (value as Profile).network === 'string'
}

function isSectionOf<T>(value: unknown, isMember: (member: unknown) => member is T): value is Record<string, T> {
  return isObject(value) && Object.values(value).every((member) => isMember(member))
}
