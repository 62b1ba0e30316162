/**
 * What each network presets for the settings (settings.ts resolves them below every other layer), as text and
 * without web3.js: the resolver loads on the plain `job exec` (src/cli/fast-start.ts), before web3.js would. The keys
 * of networks.ts' NETWORK_PRESETS are made from these same texts.
 */
import {homedir} from 'node:os'
import {join} from 'node:path'

import type {Network} from '../network.js'

/** A network's preset settings: null where it has none (localnet's come from the running localnet). */
export interface SettingPresets {
  /** Public RPC endpoint. */
  rpcUrl: string | null
  /** The default market's address. */
  market: string | null
  /** The rewards program's address. */
  rewardsProgram: string | null
  /** Where definitions and results are read: `<gateway>/ipfs/<cid>`. */
  ipfsGateway: string | null
  /** The network's secrets service (reference/network-job-plane.md §6). */
  secretsUrl: string | null
  /** Where nodes serve exposed ports, `https://<id>.node.<networkHost>` (§3). */
  networkHost: string | null
  /** The network's indexer, which lists a poster's jobs (`/jobs/`, §5). */
  indexerUrl: string | null
  /** The network's public API (@nosana/api's backend_url): hosted deployments and credits. */
  managerUrl: string | null
  /** The network's host manager: its markets (`/markets/`), their prices and the token's USD price. */
  hostManagerUrl: string | null
  /** Where the network's reservations routes are (`/reservations/gpus`): GPU models and free hosts. */
  reservationsUrl: string | null
  /** Whether transactions carry a compute-unit price unless told otherwise. */
  priorityFeeByDefault: boolean
}

/** The pinning service used with GPUNET_PINATA_JWT unless GPUNET_PINNING_SERVICE_URL says otherwise. */
export const DEFAULT_PINNING_SERVICE_URL = 'https://api.pinata.cloud'

const DEFAULT_MARKET = '7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41'
const REWARDS_PROGRAM_ID = 'nosRB8DUV67oLNrL45bo2pFLrmsWPiewe2Lk2DRNYCp'
/** The gateway the network's nodes and official client read through. */
const NETWORK_GATEWAY = 'https://nosana.mypinata.cloud'

/** Each network's preset settings. */
export const SETTING_PRESETS: Record<Network, SettingPresets> = {
  localnet: {
    rpcUrl: null,
    market: null,
    rewardsProgram: null,
    ipfsGateway: null,
    secretsUrl: null,
    networkHost: null,
    indexerUrl: null,
    managerUrl: null,
    hostManagerUrl: null,
    reservationsUrl: null,
    priorityFeeByDefault: false,
  },
  devnet: {
    rpcUrl: 'https://api.devnet.solana.com',
    market: DEFAULT_MARKET,
    rewardsProgram: REWARDS_PROGRAM_ID,
    ipfsGateway: NETWORK_GATEWAY,
    secretsUrl: 'https://secrets.k8s.dev.nos.ci',
    networkHost: 'k8s.dev.nos.ci',
    indexerUrl: 'https://blockchain-indexer.k8s.dev.nos.ci',
    managerUrl: 'https://dashboard.k8s.dev.nos.ci',
    hostManagerUrl: 'https://host-manager.k8s.dev.nosana.com',
    reservationsUrl: 'https://host-manager.k8s.dev.nosana.com',
    priorityFeeByDefault: false,
  },
  mainnet: {
    rpcUrl: 'https://api.mainnet-beta.solana.com',
    market: DEFAULT_MARKET,
    rewardsProgram: REWARDS_PROGRAM_ID,
    ipfsGateway: NETWORK_GATEWAY,
    secretsUrl: 'https://secrets.nosana.ci',
    networkHost: 'k8s.prd.nos.ci',
    indexerUrl: 'https://blockchain-indexer.k8s.prd.nos.ci',
    managerUrl: 'https://dashboard.k8s.prd.nos.ci',
    hostManagerUrl: 'https://host-manager.k8s.prd.nosana.com',
    reservationsUrl: 'https://host-manager.k8s.prd.nosana.com',
    priorityFeeByDefault: true,
  },
}

/** The localnet's default JSON-RPC port; the WebSocket endpoint listens on the next one, as Solana clients expect. */
export const DEFAULT_PORT = 28899

/** Where a localnet keeps its files unless told: `$XDG_DATA_HOME/gpunet/localnet` (`~/.local/share/gpunet/localnet`). */
export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'gpunet', 'localnet')
}
