import {ed25519} from '@noble/curves/ed25519'
import {createHash} from 'node:crypto'

/**
 * A signature over `message` for a small-order public key, made without any private key: with A of small order,
 * [k]A is one of 8 points, so S = 1 and R = B - [k]A satisfies [S]B = R + [k]A whenever k (which depends on R)
 * lands on the guessed multiple. For the identity key any R works at once.
 */
export function forgedSmallOrderSignature(smallKey: Uint8Array, message: Uint8Array): Uint8Array {
  const A = ed25519.Point.fromBytes(smallKey, true)
  const B = ed25519.Point.BASE
  const n = ed25519.CURVE.n
  // Guess the multiple j of A that [k]A will be, try R = [s]B - [j]A for s = 1, 2, ... until k ≡ j (mod 8).
  for (let s = 1n; s < 10_000n; s++) {
    for (let j = 0n; j < 8n; j++) {
      const R = B.multiply(s).subtract(j === 0n ? ed25519.Point.ZERO : A.multiplyUnsafe(j))
      const rBytes = R.toBytes()
      const k = bytesToNumberLE(createHash('sha512').update(rBytes).update(smallKey).update(message).digest()) % n
      if (A.multiplyUnsafe(k % 8n === 0n ? 8n : k % 8n).equals(A.multiplyUnsafe(j === 0n ? 8n : j))) {
        const signature = new Uint8Array(64)
        signature.set(rBytes, 0)
        let v = s
        for (let i = 32; i < 64; i++) {
          signature[i] = Number(v & 255n)
          v >>= 8n
        }
        return signature
      }
    }
  }
  throw new Error('no forgery found')
}

function bytesToNumberLE(bytes: Uint8Array): bigint {
  let value = 0n
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i] as number)
  return value
}
