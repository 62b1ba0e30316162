/**
 * The one way untrusted text becomes a key or a signature. Base58 decoding costs time quadratic in the text's
 * length (60 KB took 6 s, and the localnet is one process), so the length and alphabet are checked first: a key
 * is at most 44 characters (base58 of 32 bytes), a signature at most 88 (of 64 bytes).
 */
import bs58 from 'bs58'

import {ExitCode, GpunetError} from '../errors.js'

/** The longest base58 text of a 32-byte key. */
export const MAX_KEY_CHARS = 44
/** The longest base58 text of a 64-byte signature. */
export const MAX_SIGNATURE_CHARS = 88

const SHAPES = {key: {chars: MAX_KEY_CHARS, bytes: 32}, signature: {chars: MAX_SIGNATURE_CHARS, bytes: 64}}
const ALPHABET = /^[1-9A-HJ-NP-Za-km-z]+$/

/** What a text is read as. */
export type Base58Kind = keyof typeof SHAPES

/**
 * The decoder behind every function here, reached only once a text has its shape. An object, so a test can wrap
 * it and count what reaches it.
 */
export const base58Decoder = {decode: (text: string): Uint8Array | undefined => bs58.decodeUnsafe(text)}

/** True when `text` is a string short enough to be a key (or signature) in base58's alphabet; decodes nothing. */
export function hasBase58Shape(text: unknown, kind: Base58Kind): text is string {
  return typeof text === 'string' && text.length <= SHAPES[kind].chars && ALPHABET.test(text)
}

/** The bytes of a key or signature text, or null for anything else (checked before it is decoded). */
export function decodeBase58(text: unknown, kind: Base58Kind): Uint8Array | null {
  if (!hasBase58Shape(text, kind)) return null
  const bytes = base58Decoder.decode(text)
  return bytes?.length === SHAPES[kind].bytes ? bytes : null
}

/**
 * A Solana address given by the user (`what` names it: "the job"), as base58 text; exit 2 when it is none. The
 * texts it takes are exactly those web3.js's PublicKey takes: base58 of 32 bytes, which never needs over 44 characters.
 */
export function parseAddressText(text: string, what: string): string {
  const bytes = decodeBase58(text, 'key')
  if (!bytes) {
    throw new GpunetError('invalid_address', `${what} "${text}" is not a Solana address`, {
      exitCode: ExitCode.USAGE,
      hint: 'an address is a base58 public key such as 7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41',
    })
  }
  return bs58.encode(bytes)
}
