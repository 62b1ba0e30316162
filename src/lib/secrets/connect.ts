import {ensureLocalnet} from '../localnet/control.js'
import {defaultDataDir, defaultPort} from '../localnet/paths.js'
import {configuredSecretsUrl, type Network, resolveSecretsUrl} from '../network.js'
import {ExitCode, GpunetError} from '../errors.js'
import {loadWallet} from '../wallet.js'
import {SecretsClient} from './client.js'

/** The settings shared by the secrets commands (flags `--network`, `--secrets-url`, `--wallet`). */
export interface ConnectOptions {
  network: Network
  secretsUrl?: string
  wallet?: string
  /** Where to say that a localnet was started in the background (stderr in commands). */
  note?: (line: string) => void
}

/**
 * A client for the network's secrets service, with the wallet resolved (created on localnet when missing).
 * On localnet with no URL configured, it is the localnet's own service, starting the localnet if none runs.
 */
export async function connectSecrets(options: ConnectOptions): Promise<SecretsClient> {
  const url =
    options.network === 'localnet'
      ? (configuredSecretsUrl('localnet', options.secretsUrl) ?? (await localnetSecretsUrl(options.note)))
      : resolveSecretsUrl(options.network, options.secretsUrl)
  const wallet = await loadWallet({
    path: options.wallet,
    createIfMissing: options.network === 'localnet',
    note: options.note,
  })
  return new SecretsClient({url, wallet})
}

async function localnetSecretsUrl(note: (line: string) => void = () => {}): Promise<string> {
  const runtime = await ensureLocalnet(defaultDataDir(), defaultPort(), note)
  if (runtime.secretsUrl) return runtime.secretsUrl
  throw new GpunetError('secrets_unavailable', 'the running localnet has no secrets service', {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'it was started by an older gpunet: restart it with `gpunet localnet stop && gpunet localnet start`',
  })
}
