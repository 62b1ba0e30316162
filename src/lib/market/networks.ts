/**
 * Network presets: the jobs program, payment token, default market, rewards accounts, IPFS gateway and priority fee
 * policy of each network (reference/README.md). Settings may override them; none is needed to post on devnet.
 */
import {PublicKey} from '@solana/web3.js'

export type NetworkName = 'localnet' | 'devnet' | 'mainnet'

export interface NetworkPreset {
  name: NetworkName
  /** Public RPC endpoint; null for localnet, whose URL comes from the running localnet. */
  rpcUrl: string | null
  programId: PublicKey
  /** Payment token mint (6 decimals); null for localnet, which creates its own on first start. */
  mint: PublicKey | null
  /** Default market; null for localnet, which opens its own on first start. */
  market: PublicKey | null
  /** The rewards program `list`, `assign` and `extend` name (the program validates it, though the fee is 0). */
  rewardsProgram: PublicKey | null
  /** Where definitions and results are read: `<gateway>/ipfs/<cid>`; null for localnet (its content store). */
  ipfsGateway: string | null
  /** The network's secrets service (reference/network-job-plane.md §6); null for localnet, which runs its own. */
  secretsUrl: string | null
  /** Where nodes serve exposed ports, `https://<id>.node.<networkHost>` (§3); null for localnet (its gateway). */
  networkHost: string | null
  /** The network's indexer, which lists a poster's jobs (`/jobs/`, §5); null for localnet (it serves its own). */
  indexerUrl: string | null
  /** Whether transactions carry a compute-unit price unless told otherwise (`--priority-fee` / `--no-priority-fee`). */
  priorityFeeByDefault: boolean
}

const MAINNET_PROGRAM_ID = new PublicKey('nosJhNRqr2bc9g1nfGDcXXTXvYUmxD4cVwy2pMWhrYM')
const DEFAULT_MARKET = new PublicKey('7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41')
const REWARDS_PROGRAM_ID = new PublicKey('nosRB8DUV67oLNrL45bo2pFLrmsWPiewe2Lk2DRNYCp')
/** The gateway the network's nodes and official client read through. */
const NETWORK_GATEWAY = 'https://nosana.mypinata.cloud'

/** Decimals of the payment token on every network. */
export const TOKEN_DECIMALS = 6

export const NETWORK_PRESETS: Record<NetworkName, NetworkPreset> = {
  // The localnet runs the jobs program under the mainnet program id so a client built for one finds it on both.
  localnet: {
    name: 'localnet',
    rpcUrl: null,
    programId: MAINNET_PROGRAM_ID,
    mint: null,
    market: null,
    rewardsProgram: null,
    ipfsGateway: null,
    secretsUrl: null,
    networkHost: null,
    indexerUrl: null,
    priorityFeeByDefault: false,
  },
  devnet: {
    name: 'devnet',
    rpcUrl: 'https://api.devnet.solana.com',
    programId: new PublicKey('nosJTmGQxvwXy23vng5UjkTbfv91Bzf9jEuro78dAGR'),
    mint: new PublicKey('devr1BGQndEW5k5zfvG5FsLyZv1Ap73vNgAHcQ9sUVP'),
    market: DEFAULT_MARKET,
    rewardsProgram: REWARDS_PROGRAM_ID,
    ipfsGateway: NETWORK_GATEWAY,
    secretsUrl: 'https://secrets.k8s.dev.nos.ci',
    networkHost: 'k8s.dev.nos.ci',
    indexerUrl: 'https://blockchain-indexer.k8s.dev.nos.ci',
    priorityFeeByDefault: false,
  },
  mainnet: {
    name: 'mainnet',
    rpcUrl: 'https://api.mainnet-beta.solana.com',
    programId: MAINNET_PROGRAM_ID,
    mint: new PublicKey('nosXBVoaCTtYdLvKY6Csb4AC8JCdQKKAaWYtx2ZMoo7'),
    market: DEFAULT_MARKET,
    rewardsProgram: REWARDS_PROGRAM_ID,
    ipfsGateway: NETWORK_GATEWAY,
    secretsUrl: 'https://secrets.nosana.ci',
    networkHost: 'k8s.prd.nos.ci',
    indexerUrl: 'https://blockchain-indexer.k8s.prd.nos.ci',
    priorityFeeByDefault: true,
  },
}

/** The rewards reflection account: PDA(["reflection"]) of the rewards program. */
export function findRewardsReflection(rewardsProgram: PublicKey): PublicKey {
  return PublicKey.findProgramAddressSync([Buffer.from('reflection')], rewardsProgram)[0]
}

/** The rewards vault of a payment token: PDA([mint]) of the rewards program. */
export function findRewardsVault(rewardsProgram: PublicKey, mint: PublicKey): PublicKey {
  return PublicKey.findProgramAddressSync([mint.toBuffer()], rewardsProgram)[0]
}
