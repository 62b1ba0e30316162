/**
 * Network presets: the jobs program, payment token, default market, rewards accounts, IPFS gateway and priority fee
 * policy of each network (reference/README.md). Settings may override them; none is needed to post on devnet.
 */
import {PublicKey} from '@solana/web3.js'

import {SETTING_PRESETS} from '../settings/presets.js'

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

/** Decimals of the payment token on every network. */
export const TOKEN_DECIMALS = 6

/** A network's preset: its settings' presets (presets.ts, text) with its program and token, as keys. */
function preset(name: NetworkName, programId: PublicKey, mint: PublicKey | null): NetworkPreset {
  const text = SETTING_PRESETS[name]
  const key = (address: string | null) => (address === null ? null : new PublicKey(address))
  return {...text, name, programId, mint, market: key(text.market), rewardsProgram: key(text.rewardsProgram)}
}

export const NETWORK_PRESETS: Record<NetworkName, NetworkPreset> = {
  // The localnet runs the jobs program under the mainnet program id so a client built for one finds it on both.
  localnet: preset('localnet', MAINNET_PROGRAM_ID, null),
  devnet: preset(
    'devnet',
    new PublicKey('nosJTmGQxvwXy23vng5UjkTbfv91Bzf9jEuro78dAGR'),
    new PublicKey('devr1BGQndEW5k5zfvG5FsLyZv1Ap73vNgAHcQ9sUVP'),
  ),
  mainnet: preset('mainnet', MAINNET_PROGRAM_ID, new PublicKey('nosXBVoaCTtYdLvKY6Csb4AC8JCdQKKAaWYtx2ZMoo7')),
}

/** The rewards reflection account: PDA(["reflection"]) of the rewards program. */
export function findRewardsReflection(rewardsProgram: PublicKey): PublicKey {
  return PublicKey.findProgramAddressSync([Buffer.from('reflection')], rewardsProgram)[0]
}

/** The rewards vault of a payment token: PDA([mint]) of the rewards program. */
export function findRewardsVault(rewardsProgram: PublicKey, mint: PublicKey): PublicKey {
  return PublicKey.findProgramAddressSync([mint.toBuffer()], rewardsProgram)[0]
}

/** The rewards accounts `list` and `extend` name: each derived from the program unless a setting gives it. */
export function rewardsAccounts(
  rewardsProgram: PublicKey,
  mint: PublicKey,
  given: {rewardsReflection?: string; rewardsVault?: string},
): {rewardsReflection: PublicKey; rewardsVault: PublicKey; rewardsProgram: PublicKey} {
  return {
    rewardsReflection: given.rewardsReflection
      ? new PublicKey(given.rewardsReflection)
      : findRewardsReflection(rewardsProgram),
    rewardsVault: given.rewardsVault ? new PublicKey(given.rewardsVault) : findRewardsVault(rewardsProgram, mint),
    rewardsProgram,
  }
}
