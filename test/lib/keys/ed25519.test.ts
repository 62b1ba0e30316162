import {ed25519, ED25519_TORSION_SUBGROUP} from '@noble/curves/ed25519'
import {strict as assert} from 'node:assert'
import {createHash, randomBytes} from 'node:crypto'

import {
  generateKeypairBytes,
  isCanonicalScalar,
  isStrictPoint,
  signingKey,
  signMessage,
  verifySignature,
  verifyingKeysKept,
} from '../../../src/lib/keys/ed25519.js'
import {forgedSmallOrderSignature} from '../../helpers/ed25519.js'

/** The order of the ed25519 group: adding it to S gives another encoding of the same signature. */
const L = (1n << 252n) + 27742317777372353535851937790883648493n

describe('ed25519', () => {
  const keypair = generateKeypairBytes()
  const key = signingKey(keypair) as NonNullable<ReturnType<typeof signingKey>>
  const message = new TextEncoder().encode('service_secret_1700000000')
  const publicKey = keypair.subarray(32)

  it('verifies its own signatures and nothing else', () => {
    const signature = signMessage(message, key)
    assert.equal(signature.length, 64)
    assert.ok(verifySignature(signature, message, publicKey))
    assert.ok(!verifySignature(signature, new TextEncoder().encode('service_secret_1700000001'), publicKey))
    assert.ok(!verifySignature(signature, message, generateKeypairBytes().subarray(32)))
    assert.ok(!verifySignature(signature.subarray(0, 63), message, publicKey))
  })

  it('refuses the malleated encoding S + L of a valid signature', () => {
    const signature = signMessage(message, key)
    let s = 0n
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i] as number)
    let malleated = s + L
    const other = Uint8Array.from(signature)
    for (let i = 32; i < 64; i++) {
      other[i] = Number(malleated & 255n)
      malleated >>= 8n
    }
    assert.equal(malleated, 0n, 'S + L still fits in 32 bytes')
    assert.ok(!verifySignature(other, message, publicKey))
  })

  it('takes S below the group order L and refuses L and above, read little-endian', () => {
    // OpenSSL refuses S >= L as well, so the check is shown on its own (a laxer OpenSSL would not).
    const le = (value: bigint) => {
      const bytes = new Uint8Array(32)
      for (let i = 0; i < 32; i++, value >>= 8n) bytes[i] = Number(value & 255n)
      return bytes
    }
    assert.deepEqual(
      [0n, 1n, L - 1n, L, L + 1n, (1n << 256n) - 1n].map((s) => isCanonicalScalar(le(s))),
      [true, true, true, false, false, false],
    )
    // Little-endian: the last byte is the highest. 0x11 there is 2^252 + 2^248, past L; 0x10 is 2^252, below it.
    const past = new Uint8Array(32)
    past[31] = 0x11
    const below = new Uint8Array(32)
    below[31] = 0x10
    below[0] = 0xff
    assert.deepEqual([isCanonicalScalar(past), isCanonicalScalar(below)], [false, true])
  })

  it('refuses a keypair whose public half is not the seed’s, and one of another length than 64 bytes', () => {
    const mixed = Uint8Array.from([...keypair.subarray(0, 32), ...generateKeypairBytes().subarray(32)])
    assert.equal(signingKey(mixed), undefined)
    // A valid keypair with a byte more: its first 64 bytes would sign.
    assert.equal(signingKey(Uint8Array.from([...keypair, 0])), undefined)
    assert.ok(signingKey(keypair))
  })

  it('keeps at most 4096 parsed verifying keys, dropping the oldest', () => {
    const signature = signMessage(message, key)
    const keys = Array.from({length: 4100}, () => generateKeypairBytes().subarray(32))
    // Earlier tests left some keys in the cache: each new key adds one, up to the bound.
    const start = verifyingKeysKept()
    for (const [i, other] of keys.entries()) {
      assert.equal(verifySignature(signature, message, other), false)
      assert.equal(verifyingKeysKept(), Math.min(4096, start + i + 1))
    }
    assert.equal(verifyingKeysKept(), 4096)
    // The dropped keys are parsed again, and verify as before.
    assert.ok(verifySignature(signature, message, publicKey))
    assert.equal(verifyingKeysKept(), 4096)
  })

  it('refuses every small-order public key with a signature forged for it', () => {
    assert.equal(ED25519_TORSION_SUBGROUP.length, 8)
    for (const hex of ED25519_TORSION_SUBGROUP) {
      const smallKey = Uint8Array.from(Buffer.from(hex, 'hex'))
      assert.ok(ed25519.Point.fromBytes(smallKey).isSmallOrder(), hex)
      assert.ok(!isStrictPoint(smallKey), hex)
      const forged = forgedSmallOrderSignature(smallKey, message)
      // Permissive verification (ZIP-215, no small-order check) accepts the forgery: the hazard strictness removes.
      // OpenSSL's own verdict differs between versions (Node 24's refuses it), so it is not the reference here.
      assert.ok(
        ed25519.verify(forged, message, smallKey, {zip215: true}),
        `lax verification accepts the forgery for ${hex}`,
      )
      assert.ok(!verifySignature(forged, message, smallKey), hex)
    }
  })

  it('refuses a small-order R in a signature that cofactored verification accepts (the identity: OpenSSL too)', () => {
    // With R of small order and S = k·a, [8][S]B = [8]R + [8][k]A holds: the signature passes cofactored
    // verification (noble's zip215), and for R = the identity the cofactorless one too (OpenSSL). Only the
    // small-order rule refuses these; a valid signature with its R merely replaced would fail on its equation.
    const {scalar} = ed25519.utils.getExtendedPublicKey(keypair.subarray(0, 32))
    for (const hex of ED25519_TORSION_SUBGROUP) {
      const r = Uint8Array.from(Buffer.from(hex, 'hex'))
      const k = littleEndianNumber(createHash('sha512').update(r).update(publicKey).update(message).digest()) % L
      const forged = Uint8Array.from([...r, ...littleEndian((k * scalar) % L)])
      assert.ok(ed25519.verify(forged, message, publicKey, {zip215: true}), `cofactored verification accepts ${hex}`)
      assert.ok(!verifySignature(forged, message, publicKey), hex)
    }
    const identity = Uint8Array.from(Buffer.from(ED25519_TORSION_SUBGROUP[0] as string, 'hex'))
    assert.equal(littleEndianNumber(identity), 1n, 'the first torsion point is the identity (y = 1)')
  })

  it('refuses non-canonical encodings of the key and of R', () => {
    const signature = signMessage(message, key)
    // y = p + 1 encodes the identity again; y = p encodes y = 0 (a point of order 4); both are >= p.
    const p = (1n << 255n) - 19n
    for (const y of [p, p + 1n, p + 3n]) {
      const encoded = littleEndian(y)
      assert.ok(!isStrictPoint(encoded))
      const withR = Uint8Array.from(signature)
      withR.set(encoded, 0)
      assert.ok(!verifySignature(withR, message, publicKey))
      assert.ok(!verifySignature(signature, message, encoded))
    }
    // x = 0 with the sign bit set: the identity with the "negative x" bit, non-canonical.
    const negativeZero = Uint8Array.from(Buffer.from(ED25519_TORSION_SUBGROUP[0] as string, 'hex'))
    negativeZero[31] = (negativeZero[31] as number) | 0x80
    assert.ok(!isStrictPoint(negativeZero))
    // A key that is not a point at all: OpenSSL refuses it when verifying.
    const notAPoint = Uint8Array.from(publicKey)
    for (let i = 0; i < 256 && safeDecode(notAPoint); i++) notAPoint[0] = i
    assert.ok(!safeDecode(notAPoint))
    assert.ok(!verifySignature(signature, message, notAPoint))
  })

  it('decides on the bytes as @noble/curves does by decoding: every point encoding, canonical or not', () => {
    const p = (1n << 255n) - 19n
    const candidates: Uint8Array[] = [
      ...ED25519_TORSION_SUBGROUP.map((hex) => Uint8Array.from(Buffer.from(hex, 'hex'))),
      ...[0n, 1n, 2n, 3n, 18n, 19n].map((d) => littleEndian(p + d)),
      ...[1n, 2n, 3n].map((d) => littleEndian(p - d)),
    ]
    for (let i = 0; i < 300; i++) candidates.push(generateKeypairBytes().subarray(32))
    for (let i = 0; i < 300; i++) candidates.push(Uint8Array.from(randomBytes(32)))
    for (const base of [...candidates]) {
      const flipped = Uint8Array.from(base)
      flipped[31] = (flipped[31] as number) ^ 0x80
      candidates.push(flipped)
    }
    let points = 0
    for (const bytes of candidates) {
      if (!safeDecode(bytes)) continue // not a point: verification refuses it (above)
      points++
      let strict: boolean
      try {
        strict = !ed25519.Point.fromBytes(bytes, false).isSmallOrder()
      } catch {
        strict = false
      }
      assert.equal(isStrictPoint(bytes), strict, Buffer.from(bytes).toString('hex'))
    }
    assert.ok(points > 600, String(points))
  })

  it('takes a point whose top bytes look like y >= p but whose middle bytes do not, and refuses other lengths', () => {
    // y >= p needs all of bytes 1..30 to be 0xff: a point with the top byte 0x7f, a low byte >= 0xed and some,
    // not all, 0xff bytes between is an ordinary point (found by trying y values, as a key could be).
    let found = 0
    for (let i = 0; found < 20 && i < 10_000; i++) {
      const bytes = Uint8Array.from(randomBytes(32))
      bytes[31] = 0x7f | ((bytes[31] as number) & 0x80)
      bytes[0] = 0xed + (i % 0x13)
      bytes[1 + (i % 30)] = 0xff
      if (!safeDecode(bytes) || ed25519.Point.fromBytes(bytes, false).isSmallOrder()) continue
      found++
      assert.ok(isStrictPoint(bytes), Buffer.from(bytes).toString('hex'))
    }
    assert.equal(found, 20)
    for (const length of [0, 31, 33, 64]) assert.ok(!isStrictPoint(new Uint8Array(length).fill(9)), String(length))
  })

  it('still accepts a valid signature by a key with a fresh cache entry, after refusing others', () => {
    const fresh = generateKeypairBytes()
    const freshKey = signingKey(fresh) as NonNullable<ReturnType<typeof signingKey>>
    const signature = signMessage(message, freshKey)
    assert.ok(!verifySignature(signature, new TextEncoder().encode('other'), fresh.subarray(32)))
    assert.ok(verifySignature(signature, message, fresh.subarray(32)))
  })
})

function littleEndianNumber(bytes: Uint8Array): bigint {
  let value = 0n
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i] as number)
  return value
}

function littleEndian(value: bigint): Uint8Array {
  const bytes = new Uint8Array(32)
  for (let i = 0; i < 32; i++) {
    bytes[i] = Number(value & 255n)
    value >>= 8n
  }
  return bytes
}

function safeDecode(bytes: Uint8Array): boolean {
  try {
    ed25519.Point.fromBytes(bytes, true)
    return true
  } catch {
    return false
  }
}
