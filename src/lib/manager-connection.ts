/**
 * The deployment manager a command talks to, in one place above deployments/ (as network-connection.ts is above
 * market/): the one the settings name, else the localnet's own (starting the localnet when none runs), with the
 * owner's credentials: an API key, or the wallet's headers.
 */
import {apiAuthHeaders} from './deployments/auth-header.js'
import {DeploymentClient} from './deployments/client/client.js'
import type {AuthHeaders} from './http/api-client.js'
import {ExitCode, GpunetError} from './errors.js'
import {isLoopbackHost} from './http/client.js'
import {ensureLocalnet} from './localnet/server/control.js'
import {openWallet} from './keys/wallet.js'
import {SETTING_PRESETS} from './settings/presets.js'
import type {Settings} from './settings/settings.js'
import type {Wallet} from './keys/wallet.js'

export interface ManagerConnectOptions {
  /** Wallet headers even when an API key is set: minting and revoking API keys take the wallet alone. */
  walletOnly?: boolean
  note: (line: string) => void
}

/** A deployment manager's client, the URL it talks to, and the owner's wallet when it authenticates. */
export interface ManagerConnection {
  client: DeploymentClient
  url: string
  via: 'wallet' | 'api-key'
  /** Loads the owner's wallet (fund and withdraw sign with it). */
  wallet(): Promise<Wallet>
  /**
   * How many node agents run in the localnet whose own manager this is (each runs one job at a time, so more
   * replicas than nodes stay QUEUED); null for any other manager.
   */
  localnetNodes: number | null
  /**
   * True for the network's hosted manager (its public API, the network's preset): gpunet neither runs it nor sees
   * its traffic, so it takes no autoscaling policy or budget (docs/deployments.md, "Autoscaling").
   */
  hosted: boolean
}

/**
 * The client of the deployment manager the settings name (`manager`: flag, environment, profile, config file, on
 * devnet and mainnet the network's public API by preset), else on localnet the localnet's own (starting the localnet when none runs), authenticated by the `managerApiKey`
 * setting or the wallet's headers. Wallet headers go only over https or to this machine: their signature is a
 * lasting credential, so plain http elsewhere is exit 2.
 */
export async function connectManager(settings: Settings, options: ManagerConnectOptions): Promise<ManagerConnection> {
  const set = settings.typed('manager')?.value
  const localnet = set ? null : await localnetManager(settings, options.note)
  const url = set ? checkManagerUrl(set) : localnet!.url
  const wallet = () => openWallet(settings, {note: options.note})
  const apiKey = options.walletOnly ? undefined : settings.typed('managerApiKey')?.value
  let auth: AuthHeaders
  if (apiKey) {
    auth = () => ({authorization: `Bearer ${apiKey}`})
  } else {
    const owner = await wallet()
    auth = () => ({...apiAuthHeaders(owner)})
  }
  const client = new DeploymentClient(url, auth, {
    secrets: apiKey ? [apiKey] : [],
    keyHint: settings.envName('managerApiKey'),
  })
  const hosted = isHostedManager(url, SETTING_PRESETS[settings.network].managerUrl)
  return {client, url, via: apiKey ? 'api-key' : 'wallet', wallet, localnetNodes: localnet?.nodes ?? null, hosted}
}

/** True when the settings name the network's hosted manager (read without connecting, or starting a localnet). */
export function settingsNameHostedManager(settings: Settings): boolean {
  const set = settings.typed('manager')?.value
  return set !== undefined && isHostedManager(set, SETTING_PRESETS[settings.network].managerUrl)
}

/** True when `url` is the network's own manager (`preset`, its public API), whatever its path. */
export function isHostedManager(url: string, preset: string | null): boolean {
  return preset !== null && new URL(url).origin === new URL(preset).origin
}

/** The manager's URL (its kind checked it is one), refused unless https or on this machine. */
function checkManagerUrl(text: string): string {
  const url = new URL(text)
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return text
  throw new GpunetError(
    'manager_url_insecure',
    `not sending credentials to ${text}: the manager must be https (or on this machine)`,
    {
      exitCode: ExitCode.USAGE,
      hint: 'the wallet header is a lasting credential; put the manager behind TLS (docs/deployment-manager.md)',
    },
  )
}

/**
 * The localnet's own manager, and how many nodes that localnet runs: devnet and mainnet have the network's public
 * API as their preset.
 */
async function localnetManager(
  settings: Settings,
  note: (line: string) => void,
): Promise<{url: string; nodes: number}> {
  const {network} = settings
  if (network !== 'localnet') {
    throw new GpunetError('manager_missing', `no deployment manager is set for ${network}`, {
      exitCode: ExitCode.USAGE,
      hint: `pass --manager URL, set ${settings.envName('manager')}, or \`gpunet config set manager URL --network ${network}\``,
    })
  }
  const runtime = await ensureLocalnet(settings.localnet.dataDir, settings.localnet.port, note)
  if (runtime.deploymentManager) return {url: runtime.deploymentManager, nodes: runtime.nodes?.length ?? 0}
  throw new GpunetError('manager_unavailable', 'the running localnet has no deployment manager', {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'it was started by an older gpunet, or without one: restart it with `gpunet localnet stop && gpunet localnet start`',
  })
}
