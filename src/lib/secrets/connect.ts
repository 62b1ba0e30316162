import {type Network, resolveSecretsUrl} from '../network.js'
import {loadWallet} from '../wallet.js'
import {SecretsClient} from './client.js'

/** The settings shared by the secrets commands (flags `--network`, `--secrets-url`, `--wallet`). */
export interface ConnectOptions {
  network: Network
  secretsUrl?: string
  wallet?: string
}

/** A client for the network's secrets service, with the wallet resolved (created on localnet when missing). */
export async function connectSecrets(options: ConnectOptions): Promise<SecretsClient> {
  const url = resolveSecretsUrl(options.network, options.secretsUrl)
  const wallet = await loadWallet({path: options.wallet, createIfMissing: options.network === 'localnet'})
  return new SecretsClient({url, wallet})
}
