import {ed25519, ED25519_TORSION_SUBGROUP} from '@noble/curves/ed25519'
import {createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify} from 'node:crypto'

/**
 * ed25519 with raw 32-byte keys, as Solana stores them. Verification is strict (RFC 8032 with the checks of
 * `verify_strict`): the key and R must be canonical encodings of points that are not of small order, and S must
 * be below the group order. The group equation is checked by node:crypto (OpenSSL), an order of magnitude
 * faster than pure JavaScript, which also refuses encodings that are no point at all.
 */

/** The order of the ed25519 group. */
const GROUP_ORDER = ed25519.CURVE.n

/*
 * Keys go in and out as DER, never as JWK: in Node 20 a JWK export of an ed25519 key now and then deadlocks
 * the main thread after a few thousand calls, and DER export never did. The fixed prefixes are those of
 * RFC 8410: a PKCS#8 private key wrapping the 32-byte seed, and an SPKI public key wrapping the 32-byte point.
 */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/** The 32 raw bytes of an ed25519 public key. */
function rawPublicKey(key: KeyObject): Buffer {
  return (key.export({format: 'der', type: 'spki'}) as Buffer).subarray(SPKI_PREFIX.length)
}

/** A new keypair as Solana writes it: 64 bytes, the secret seed then the public key. */
export function generateKeypairBytes(): Uint8Array {
  const {privateKey, publicKey} = generateKeyPairSync('ed25519')
  const seed = (privateKey.export({format: 'der', type: 'pkcs8'}) as Buffer).subarray(PKCS8_PREFIX.length)
  return Uint8Array.from([...seed, ...rawPublicKey(publicKey)])
}

/** The signing key of 64 keypair bytes; undefined when the public half is not the seed's. */
export function signingKey(keypair: Uint8Array): KeyObject | undefined {
  if (keypair.length !== 64) return undefined
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, keypair.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  })
  // OpenSSL derives the public key from the seed, so comparing catches a mismatched file.
  return rawPublicKey(createPublicKey(key)).equals(keypair.subarray(32, 64)) ? key : undefined
}

/** Signs a message. */
export function signMessage(message: Uint8Array, key: KeyObject): Uint8Array {
  return new Uint8Array(sign(null, message, key))
}

/**
 * The encodings of the 8 points of small order (from @noble/curves), as libsodium blocks them, and the same with
 * the sign bit flipped: for x != 0 that is another of the 8, for the two points with x = 0 (y = 1 and y = -1) a
 * non-canonical encoding.
 */
const SMALL_ORDER = new Set(
  ED25519_TORSION_SUBGROUP.flatMap((hex) => {
    const flipped = Buffer.from(hex, 'hex')
    flipped[31] = (flipped[31] as number) ^ 0x80
    return [hex, flipped.toString('hex')]
  }),
)

/**
 * True unless `bytes` encodes a point of small order or is non-canonical (y at or above p = 2^255 - 19, or
 * x = 0 with the sign bit set): checked on the bytes, without decoding the point. Whether the bytes are a
 * point at all is left to the verification, which fails when they are not.
 */
export function isStrictPoint(bytes: Uint8Array): boolean {
  if (bytes.length !== 32) return false
  if (SMALL_ORDER.has(Buffer.from(bytes.buffer, bytes.byteOffset, 32).toString('hex'))) return false
  // y >= p: the top byte without the sign bit is 0x7f, the 30 below it 0xff, and the lowest at least 0xed.
  const top = (bytes[31] as number) & 0x7f
  return !(top === 0x7f && (bytes[0] as number) >= 0xed && bytes.subarray(1, 31).every((b) => b === 0xff))
}

/**
 * True when `s` (a signature's last 32 bytes, little-endian) is below the group order. OpenSSL refuses such an S
 * too, so no signature shows this check at work; it stays so that a laxer OpenSSL never lets a signature be
 * re-encoded as S + L, and its tests call it directly.
 */
export function isCanonicalScalar(s: Uint8Array): boolean {
  let value = 0n
  for (let i = s.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(s[i] as number)
  return value < GROUP_ORDER
}

// Fee payers and service clients sign again and again: keep their checked, parsed keys (null: refused key).
const verifyingKeys = new Map<string, KeyObject | null>()
const VERIFYING_KEYS_KEPT = 4096

/** How many parsed verifying keys are kept now (at most VERIFYING_KEYS_KEPT): the cache's bound, for its tests. */
export function verifyingKeysKept(): number {
  return verifyingKeys.size
}

function verifyingKey(publicKey: Uint8Array): KeyObject | null {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('base64')
  let key = verifyingKeys.get(id)
  if (key === undefined) {
    key = isStrictPoint(publicKey)
      ? createPublicKey({key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki'})
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
  if (!isCanonicalScalar(signature.subarray(32, 64))) return false
  const key = verifyingKey(publicKey)
  if (!key || !isStrictPoint(signature.subarray(0, 32))) return false
  try {
    return verify(null, message, key, signature)
  } catch {
    return false
  }
}
