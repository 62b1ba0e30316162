/**
 * The deployment manager a command talks to, in one place above deployments/ (as network-connection.ts is above
 * market/): the one the settings name, else the localnet's own (starting the localnet when none runs), with the
 * owner's credentials: an API key, or the wallet's headers.
 */
import {apiAuthHeaders} from './deployments/auth-header.js'
import {type AuthHeaders, DeploymentClient} from './deployments/client.js'
import {ExitCode, GpunetError} from './errors.js'
import {isLoopbackHost} from './http.js'
import {ensureLocalnet} from './localnet/control.js'
import {defaultDataDir, defaultPort} from './localnet/paths.js'
import {type Network, type Setting, settingValue} from './network.js'
import {loadWallet, type Wallet} from './wallet.js'

/** The deployment manager `gpunet deployment` talks to: `--manager` > `GPUNET_MANAGER_URL` > profile > config file. */
export const MANAGER_SETTING = {key: 'manager', env: 'GPUNET_MANAGER_URL', flag: '--manager'} as const satisfies Setting

/** An API key of the manager, sent as `Authorization: Bearer` instead of the wallet's headers. */
export const MANAGER_API_KEY_SETTING = {key: 'managerApiKey', env: 'GPUNET_MANAGER_API_KEY'} as const satisfies Setting

export interface ManagerConnectOptions {
  network: Network
  /** `--manager URL`. */
  manager?: string
  /** `--wallet FILE`: the owner, whose headers authenticate unless an API key is set. */
  wallet?: string
  /** Wallet headers even when an API key is set: minting and revoking API keys take the wallet alone. */
  walletOnly?: boolean
  note: (line: string) => void
  env?: NodeJS.ProcessEnv
}

/** A deployment manager's client, the URL it talks to, and the owner's wallet when it authenticates. */
export interface ManagerConnection {
  client: DeploymentClient
  url: string
  via: 'wallet' | 'api-key'
  /** Loads the owner's wallet (fund and withdraw sign with it). */
  wallet(): Promise<Wallet>
}

/**
 * The client of the deployment manager of `network`: the one set (flag, environment, profile, config file), else on
 * localnet the localnet's own (starting the localnet when none runs). Wallet headers go only over https or to this
 * machine: their signature is a lasting credential, so plain http elsewhere is exit 2.
 */
export async function connectManager(options: ManagerConnectOptions): Promise<ManagerConnection> {
  const env = options.env ?? process.env
  const {network} = options
  const set = settingValue(network, MANAGER_SETTING, options.manager, env)
  const url = set ? checkManagerUrl(set) : await defaultManagerUrl(network, options.note, env)
  const wallet = () =>
    loadWallet({path: options.wallet, createIfMissing: network === 'localnet', note: options.note, env})
  const apiKey = options.walletOnly ? undefined : settingValue(network, MANAGER_API_KEY_SETTING, undefined, env)
  let auth: AuthHeaders
  if (apiKey) {
    auth = () => ({authorization: `Bearer ${apiKey}`})
  } else {
    const owner = await wallet()
    auth = () => ({...apiAuthHeaders(owner)})
  }
  return {client: new DeploymentClient(url, auth), url, via: apiKey ? 'api-key' : 'wallet', wallet}
}

function checkManagerUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new GpunetError('manager_url_invalid', `the deployment manager URL "${text}" is not a URL`, {
      exitCode: ExitCode.USAGE,
      hint: 'use a full URL such as https://manager.example.org or http://127.0.0.1:3001',
    })
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    return text.replace(/\/+$/, '')
  }
  throw new GpunetError(
    'manager_url_insecure',
    `not sending credentials to ${text}: the manager must be https (or on this machine)`,
    {
      exitCode: ExitCode.USAGE,
      hint: 'the wallet header is a lasting credential; put the manager behind TLS (docs/deployment-manager.md)',
    },
  )
}

async function defaultManagerUrl(
  network: Network,
  note: (line: string) => void,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  if (network !== 'localnet') {
    throw new GpunetError('manager_missing', `no deployment manager is set for ${network}`, {
      exitCode: ExitCode.USAGE,
      hint: `pass --manager URL, set ${MANAGER_SETTING.env}, or \`gpunet config set manager URL --network ${network}\` (the network's own: ${NETWORK_MANAGERS[network]})`,
    })
  }
  const runtime = await ensureLocalnet(defaultDataDir(env), defaultPort(env), note)
  if (runtime.deploymentManager) return runtime.deploymentManager
  throw new GpunetError('manager_unavailable', 'the running localnet has no deployment manager', {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'it was started by an older gpunet, or without one: restart it with `gpunet localnet stop && gpunet localnet start`',
  })
}

/** The network's hosted deployment API (@nosana/api's backend), named in hints: gpunet never picks it unasked. */
const NETWORK_MANAGERS = {devnet: 'https://dashboard.k8s.dev.nos.ci', mainnet: 'https://dashboard.k8s.prd.nos.ci'}
