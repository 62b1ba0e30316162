import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {ExitCode, GpunetError} from './errors.js'
import {configDir} from './private-file.js'

/** What `~/.config/gpunet/config.json` may set per network, below flags and environment variables. */
export interface NetworkConfig {
  secretsUrl?: string
  rpcUrl?: string
  /** Host under which nodes serve exposed ports: `https://<job>.node.<networkHost>`. */
  networkHost?: string
  /** An IPFS HTTP API (`POST /api/v0/add`); also read as the gateway unless `ipfsGateway` is set. */
  contentStoreUrl?: string
  /** The JWT of a pinning service (Pinata API): uploads go there instead of an IPFS HTTP API. */
  pinataJwt?: string
  /** The pinning service's API URL (default https://api.pinata.cloud). */
  pinningServiceUrl?: string
  /** The IPFS gateway definitions and results are read from: `<gateway>/ipfs/<cid>`. */
  ipfsGateway?: string
  /** Whether transactions pay a priority fee ("true"/"false"); default on mainnet only. */
  priorityFee?: string
  /** The most SOL one transaction may pay as priority fee (default 0.001). */
  maxPriorityFee?: string
  market?: string
  rewardsReflection?: string
  rewardsVault?: string
  rewardsProgram?: string
}

/** The config file's path: `$XDG_CONFIG_HOME/gpunet/config.json` or `~/.config/gpunet/config.json`. */
export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'config.json')
}

/** The settings of one network from the config file (`{"networks": {"devnet": {"secretsUrl": "…"}}}`); none without a file. */
export function networkConfig(network: string, env: NodeJS.ProcessEnv = process.env): NetworkConfig {
  const file = configFile(env)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return {}
  }
  try {
    const config = JSON.parse(text) as {networks?: Record<string, NetworkConfig>}
    return config.networks?.[network] ?? {}
  } catch {
    throw new GpunetError('config_invalid', `${file} is not valid JSON`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint: 'fix or remove the file',
    })
  }
}
