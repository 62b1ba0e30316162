/** Network presets: the jobs program, payment token and default market of each network (reference/README.md). */
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
}

const MAINNET_PROGRAM_ID = new PublicKey('nosJhNRqr2bc9g1nfGDcXXTXvYUmxD4cVwy2pMWhrYM')
const DEFAULT_MARKET = new PublicKey('7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41')

/** Decimals of the payment token on every network. */
export const TOKEN_DECIMALS = 6

export const NETWORK_PRESETS: Record<NetworkName, NetworkPreset> = {
  // The localnet runs the jobs program under the mainnet program id so a client built for one finds it on both.
  localnet: {name: 'localnet', rpcUrl: null, programId: MAINNET_PROGRAM_ID, mint: null, market: null},
  devnet: {
    name: 'devnet',
    rpcUrl: 'https://api.devnet.solana.com',
    programId: new PublicKey('nosJTmGQxvwXy23vng5UjkTbfv91Bzf9jEuro78dAGR'),
    mint: new PublicKey('devr1BGQndEW5k5zfvG5FsLyZv1Ap73vNgAHcQ9sUVP'),
    market: DEFAULT_MARKET,
  },
  mainnet: {
    name: 'mainnet',
    rpcUrl: 'https://api.mainnet-beta.solana.com',
    programId: MAINNET_PROGRAM_ID,
    mint: new PublicKey('nosXBVoaCTtYdLvKY6Csb4AC8JCdQKKAaWYtx2ZMoo7'),
    market: DEFAULT_MARKET,
  },
}
