import {ed25519} from '@noble/curves/ed25519'
import {createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify} from 'node:crypto'

/**
 * ed25519 with raw 32-byte keys, as Solana stores them. Verification is strict (RFC 8032 with the checks of
 * `verify_strict`): the key and R must be canonical encodings of points that are not of small order, and S must
 * be below the group order. The point checks come from @noble/curves; the group equation from node:crypto
 * (OpenSSL), an order of magnitude faster than pure JavaScript.
 */

/** The order of the ed25519 group. */
const GROUP_ORDER = ed25519.CURVE.n

/** A new keypair as Solana writes it: 64 bytes, the secret seed then the public key. */
export function generateKeypairBytes(): Uint8Array {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({format: 'jwk'})
  return Uint8Array.from([...Buffer.from(jwk.d as string, 'base64url'), ...Buffer.from(jwk.x as string, 'base64url')])
}

/** The signing key of 64 keypair bytes; undefined when the public half is not the seed's. */
export function signingKey(keypair: Uint8Array): KeyObject | undefined {
  const x = Buffer.from(keypair.subarray(32, 64)).toString('base64url')
  const key = createPrivateKey({
    key: {kty: 'OKP', crv: 'Ed25519', d: Buffer.from(keypair.subarray(0, 32)).toString('base64url'), x},
    format: 'jwk',
  })
  // OpenSSL derives the public key from the seed and ignores `x`, so comparing catches a mismatched file.
  return createPublicKey(key).export({format: 'jwk'}).x === x ? key : undefined
}

/** Signs a message. */
export function signMessage(message: Uint8Array, key: KeyObject): Uint8Array {
  return new Uint8Array(sign(null, message, key))
}

/** True when `bytes` is the canonical encoding of a curve point that is not of small order (RFC 8032 strict). */
export function isStrictPoint(bytes: Uint8Array): boolean {
  try {
    return !ed25519.Point.fromBytes(bytes, false).isSmallOrder()
  } catch {
    return false
  }
}

// Fee payers and service clients sign again and again: keep their checked, parsed keys (null: refused key).
const verifyingKeys = new Map<string, KeyObject | null>()
const VERIFYING_KEYS_KEPT = 4096

function verifyingKey(publicKey: Uint8Array): KeyObject | null {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('base64')
  let key = verifyingKeys.get(id)
  if (key === undefined) {
    key = isStrictPoint(publicKey)
      ? createPublicKey({
          key: {kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url')},
          format: 'jwk',
        })
      : null
    if (verifyingKeys.size >= VERIFYING_KEYS_KEPT) verifyingKeys.delete(verifyingKeys.keys().next().value as string)
    verifyingKeys.set(id, key)
  }
  return key
}

/**
 * True when `signature` (64 bytes) is `publicKey`'s (32 bytes) over `message` under strict rules: a small-order
 * key or R (which would let anyone forge), a non-canonical point encoding or an S at or above the group order
 * (which would let a signature be re-encoded) are refused; so is any malformed input.
 */
export function verifySignature(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false
  let s = 0n
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i] as number)
  if (s >= GROUP_ORDER) return false
  const key = verifyingKey(publicKey)
  if (!key || !isStrictPoint(signature.subarray(0, 32))) return false
  try {
    return verify(null, message, key, signature)
  } catch {
    return false
  }
}
