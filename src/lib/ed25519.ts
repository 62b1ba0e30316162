import {createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify} from 'node:crypto'

/**
 * ed25519 with raw 32-byte keys, as Solana stores them, over node:crypto (OpenSSL): an order of magnitude
 * faster than pure JavaScript, and it refuses non-canonical signatures, so a signature cannot be re-encoded.
 */

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

/** True when `signature` (64 bytes) is `publicKey`'s (32 bytes) over `message`; false for any malformed input. */
export function verifySignature(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    const key = createPublicKey({
      key: {kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url')},
      format: 'jwk',
    })
    return verify(null, message, key, signature)
  } catch {
    return false
  }
}
