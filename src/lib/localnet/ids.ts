/**
 * The addresses a localnet's chain is created with: its own (the jobs program under the mainnet program id, a
 * mint of its own), or a network's, so that clients carrying that network's addresses built in (the network's CLI
 * and SDK) find the jobs program and the payment token where they expect them. Chosen when the chain is created.
 */
import type {PublicKey} from '@solana/web3.js'

import {NETWORK_PRESETS} from '../market/networks.js'
import type {LocalnetIds} from '../settings/kinds.js'

/** The jobs program and payment token mint of a chain created with `ids`; a null mint is a new one of its own. */
export function idsAddresses(ids: LocalnetIds): {programId: PublicKey; mint: PublicKey | null} {
  if (ids === 'own') return {programId: NETWORK_PRESETS.localnet.programId, mint: null}
  const preset = NETWORK_PRESETS[ids]
  return {programId: preset.programId, mint: preset.mint}
}
