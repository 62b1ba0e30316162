/**
 * Resolving a network for a command, in one place above market/ and secrets/: on localnet, the running localnet
 * (started in the background when none runs) gives the RPC, content store, secrets service and market; on devnet
 * and mainnet, the command's settings (settings.ts: flag > environment > profile > config file > preset) do.
 */
import {join} from 'node:path'

import {PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError, isGpunetError} from './errors.js'
import {ContentClient} from './ipfs/client.js'
import {ensureLocalnet, localnetStatus} from './localnet/server/control.js'
import {localnetRewardsAccounts} from './localnet/rewards.js'
import {type MarketNetwork, marketNetwork, parseAddress} from './market/connect.js'
import type {JobView} from './market/jobs/jobs.js'
import {readOwnJob} from './market/jobs/manage.js'
import {SecretsClient} from './secrets/client.js'
import type {JobAuthority} from './secrets/service/auth.js'
import {chainJobAuthority} from './secrets/service/chain-authority.js'
import {cachedJobAuthority} from './secrets/service/job-cache.js'
import {TokenCache} from './secrets/token-cache.js'
import type {Settings} from './settings/settings.js'
import {openWallet, type Wallet} from './keys/wallet.js'

/** A network's market side: its RPC connection, program, token, market and content store. */
export async function connectMarket(settings: Settings, note: (line: string) => void): Promise<MarketNetwork> {
  if (settings.network !== 'localnet') return marketNetwork(settings)
  const {dataDir, port} = settings.localnet
  const runtime = await ensureLocalnet(dataDir, port, note)
  const status = await localnetStatus(dataDir, runtime)
  const mint = new PublicKey(status.mint!)
  return marketNetwork(settings, {
    rpcUrl: runtime.rpcUrl,
    contentStoreUrl: runtime.contentStoreUrl,
    gatewayUrl: runtime.gatewayUrl ?? null,
    programId: new PublicKey(status.programId!),
    mint,
    market: new PublicKey(status.market!),
    node: status.node,
    markets: status.markets.map(({address, slug, nodes}) => ({address, slug, nodes})),
    rewards: localnetRewardsAccounts(mint),
  })
}

/** What `job stop`, `job extend` and `job restart` start from: the network, the poster's wallet and its job. */
export async function openOwnJob(
  settings: Settings,
  job: string,
  note: (line: string) => void,
): Promise<{net: MarketNetwork; wallet: Wallet; view: JobView}> {
  const address = parseAddress(job, 'the job')
  const net = await connectMarket(settings, note)
  const wallet = await openWallet(settings, {note})
  return {net, wallet, view: await readOwnJob(net, wallet, address)}
}

/** What a secrets client needs beyond the settings. */
export interface SecretsConnectOptions {
  /** `--allow-unbound-login`: see SecretsClientOptions. */
  allowUnboundLogin?: boolean
  /** Where to say that a localnet was started in the background (stderr in commands). */
  note?: (line: string) => void
  /** The wallet to log in with, when the caller has it open (the library's may not be the settings' one). */
  wallet?: Wallet
}

/**
 * A client for the network's secrets service (the `secretsUrl` setting, else the network's own), with the wallet
 * resolved (created on localnet when missing). On localnet with no URL set, it is the localnet's own service,
 * starting the localnet if none runs.
 */
export async function connectSecrets(settings: Settings, options: SecretsConnectOptions = {}): Promise<SecretsClient> {
  const url = settings.typed('secretsUrl')?.value ?? (await localnetSecretsUrl(settings, options.note))
  const wallet = options.wallet ?? (await openWallet(settings, {note: options.note}))
  return new SecretsClient({
    url,
    wallet,
    allowUnboundLogin: options.allowUnboundLogin,
    cache: new TokenCache(join(settings.configDir, 'secrets-tokens.json')),
  })
}

async function localnetSecretsUrl(settings: Settings, note: (line: string) => void = () => {}): Promise<string> {
  const runtime = await ensureLocalnet(settings.localnet.dataDir, settings.localnet.port, note)
  if (runtime.secretsUrl) return runtime.secretsUrl
  throw new GpunetError('secrets_unavailable', 'the running localnet has no secrets service', {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'it was started by an older gpunet: restart it with `gpunet localnet stop && gpunet localnet start`',
  })
}

/**
 * Resolves the network (starting the localnet when it is the one and none runs) and its cached job authority.
 * Definitions are read through the `ipfsGateway` setting: on localnet, else the localnet's store; elsewhere one
 * must be set (the network's preset gateway serves what the network's own pinning service holds, not every CID).
 */
export async function connectJobAuthority(
  settings: Settings,
  note: (line: string) => void,
): Promise<{authority: JobAuthority; rpcUrl: string; ipfsGateway: string}> {
  const {network} = settings
  const net = await connectMarket(settings, note)
  const gateway = settings.typed('ipfsGateway')
  const set = gateway?.from === 'preset' ? undefined : gateway?.value
  if (network !== 'localnet' && set === undefined) {
    throw new GpunetError('ipfs_gateway_missing', `no ipfsGateway is configured for ${network}`, {
      exitCode: ExitCode.USAGE,
      hint:
        `pass --ipfs-gateway, set ${settings.envName('ipfsGateway')}, or run ` +
        `\`gpunet config set ipfsGateway VALUE --network ${network}\` (written to ${settings.configFile})`,
    })
  }
  const ipfsGateway = set ?? net.content().url
  const content = new ContentClient(null, ipfsGateway)
  const authority = chainJobAuthority({
    connection: net.connection,
    programId: net.programId,
    async readContent(cid, limits) {
      try {
        return await content.get(cid, limits)
      } catch (error) {
        if (isGpunetError(error) && error.exitCode === ExitCode.NOT_FOUND) return null
        throw error
      }
    },
    settings: {
      rpc: `--rpc (${settings.envName('rpcUrl')}) of secrets serve, now ${net.rpcUrl}`,
      content: `--ipfs-gateway (${settings.envName('ipfsGateway')}) of secrets serve, now ${ipfsGateway}`,
    },
  })
  return {authority: cachedJobAuthority(authority), rpcUrl: net.rpcUrl, ipfsGateway}
}
