/**
 * Checks on untrusted bytes before they reach a decoder: the size caps a Solana node applies to encoded input
 * (docs/localnet.md "Input limits"), and a walk of a wire transaction's layout that refuses what bincode's
 * short_vec refuses. web3.js accepts a compact-u16 written with a needless continuation byte (`0x81 0x00` for
 * 1); litesvm's native code panics on it, and a panic aborts the whole process, so nothing gets past this walk
 * that a validator would not deserialize.
 */
import {base58btc} from 'multiformats/bases/base58'

/** The largest transaction a node accepts, in bytes (Solana's PACKET_DATA_SIZE). */
export const PACKET_DATA_SIZE = 1232
/** The longest base58 text a transaction may be sent as (Solana's MAX_BASE58_SIZE: base58 of 1232 bytes). */
export const MAX_BASE58_TRANSACTION = 1683
/** The longest base64 text a transaction may be sent as (Solana's MAX_BASE64_SIZE). */
export const MAX_BASE64_TRANSACTION = 1644
/** The most bytes a memcmp filter compares (Solana's MAX_DATA_SIZE), and its longest encodings. */
export const MAX_FILTER_BYTES = 128
const MAX_FILTER_BASE58 = 175
const MAX_FILTER_BASE64 = 172

/** Thrown for input past a cap or bytes laid out as no transaction; the message says which. */
export class WireError extends Error {
  override name = 'WireError'
}

/** Decodes a transaction sent as base58 or base64 text, refusing text or bytes past the node's caps. */
export function decodeTransactionText(text: string, encoding: 'base58' | 'base64'): Uint8Array {
  const max = encoding === 'base58' ? MAX_BASE58_TRANSACTION : MAX_BASE64_TRANSACTION
  if (text.length > max) {
    throw new WireError(
      `${encoding} encoded transaction too large: ${text.length} bytes (max: encoded/raw ${max}/${PACKET_DATA_SIZE})`,
    )
  }
  const bytes = decodeText(text, encoding)
  if (bytes.length > PACKET_DATA_SIZE) {
    throw new WireError(`decoded transaction too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`)
  }
  return bytes
}

/** Decodes a memcmp filter's bytes, refusing more than MAX_FILTER_BYTES as a node does. */
export function decodeFilterBytes(text: string, encoding: 'base58' | 'base64'): Uint8Array {
  const max = encoding === 'base58' ? MAX_FILTER_BASE58 : MAX_FILTER_BASE64
  const tooLarge = `encoded binary data should be less than ${MAX_FILTER_BYTES + 1} bytes`
  if (text.length > max) throw new WireError(tooLarge)
  const bytes = decodeText(text, encoding)
  if (bytes.length > MAX_FILTER_BYTES) throw new WireError(tooLarge)
  return bytes
}

function decodeText(text: string, encoding: 'base58' | 'base64'): Uint8Array {
  if (encoding === 'base64') return Buffer.from(text, 'base64')
  try {
    return base58btc.baseDecode(text)
  } catch {
    throw new WireError('invalid base58 encoding')
  }
}

/**
 * Walks a wire transaction (signatures, then a legacy or v0 message) and throws WireError unless every
 * compact-u16 is canonical and every count fits in the bytes. Trailing bytes are left to the decoder.
 */
export function checkTransactionLayout(raw: Uint8Array): void {
  if (raw.length > PACKET_DATA_SIZE) {
    throw new WireError(`transaction too large: ${raw.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`)
  }
  let at = 0
  const take = (n: number, what: string) => {
    if (at + n > raw.length) throw new WireError(`transaction ends inside its ${what}`)
    at += n
  }
  const shortVec = (what: string): number => {
    let value = 0
    for (let i = 0; i < 3; i++) {
      if (at >= raw.length) throw new WireError(`transaction ends inside the length of its ${what}`)
      const byte = raw[at++] as number
      // As bincode's short_vec: a zero continuation byte is an alias, a third byte holds at most 2 bits.
      if (i > 0 && byte === 0) throw new WireError(`non-canonical compact-u16 for the length of its ${what}`)
      if (i === 2 && byte > 3) throw new WireError(`compact-u16 overflow for the length of its ${what}`)
      value |= (byte & 0x7f) << (7 * i)
      if ((byte & 0x80) === 0) return value
    }
    throw new WireError(`compact-u16 too long for the length of its ${what}`)
  }
  take(64 * shortVec('signatures'), 'signatures')
  if (at >= raw.length) throw new WireError('transaction has no message')
  const versioned = ((raw[at] as number) & 0x80) !== 0
  if (versioned) {
    if (((raw[at] as number) & 0x7f) !== 0) throw new WireError(`unsupported message version ${raw[at]! & 0x7f}`)
    at += 1
  }
  take(3, 'message header')
  take(32 * shortVec('account keys'), 'account keys')
  take(32, 'recent blockhash')
  const instructions = shortVec('instructions')
  for (let i = 0; i < instructions; i++) {
    take(1, 'instructions')
    take(shortVec('instruction accounts'), 'instruction accounts')
    take(shortVec('instruction data'), 'instruction data')
  }
  if (!versioned) return
  const lookups = shortVec('address table lookups')
  for (let i = 0; i < lookups; i++) {
    take(32, 'address table lookups')
    take(shortVec('writable lookup indexes'), 'writable lookup indexes')
    take(shortVec('readonly lookup indexes'), 'readonly lookup indexes')
  }
}
