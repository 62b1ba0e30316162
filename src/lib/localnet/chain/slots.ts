/**
 * Slots and recent blockhashes. Slots advance with wall time as on a real cluster; each slot's blockhash is
 * derived from a per-localnet seed, so a blockhash is valid for the 150 slots after it was current and the
 * check needs no table, across restarts too.
 */
import {createHash} from 'node:crypto'

import {base58btc} from 'multiformats/bases/base58'

/** How many slots a blockhash stays valid, as on mainnet. */
export const MAX_PROCESSING_AGE = 150
/** Default slot duration, as on mainnet. */
export const DEFAULT_SLOT_MS = 400

export class SlotClock {
  private readonly cache = new Map<number, string>()

  constructor(
    private readonly seed: string,
    private readonly genesisMs: number,
    readonly slotMs = DEFAULT_SLOT_MS,
  ) {}

  /** The current slot (also the block height: the localnet skips no slot). */
  slot(now = Date.now()): number {
    return Math.max(0, Math.floor((now - this.genesisMs) / this.slotMs))
  }

  /** Unix seconds of the current slot, what the Clock sysvar reports. */
  unixTimestamp(now = Date.now()): bigint {
    return BigInt(Math.floor(now / 1000))
  }

  /** The blockhash of a slot. */
  blockhash(slot: number): string {
    let hash = this.cache.get(slot)
    if (!hash) {
      hash = base58btc.baseEncode(createHash('sha256').update(`${this.seed}:${slot}`).digest())
      if (this.cache.size > 4 * MAX_PROCESSING_AGE) this.cache.clear()
      this.cache.set(slot, hash)
    }
    return hash
  }

  /** The slot whose blockhash this is, when it is still valid; null for an unknown or expired blockhash. */
  recentSlotOf(blockhash: string, now = Date.now()): number | null {
    const current = this.slot(now)
    for (let slot = current; slot >= 0 && slot >= current - MAX_PROCESSING_AGE; slot--) {
      if (this.blockhash(slot) === blockhash) return slot
    }
    return null
  }
}
