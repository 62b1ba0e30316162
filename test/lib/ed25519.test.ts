import {strict as assert} from 'node:assert'

import {generateKeypairBytes, signingKey, signMessage, verifySignature} from '../../src/lib/ed25519.js'

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

  it('refuses a keypair whose public half is not the seed’s', () => {
    const mixed = Uint8Array.from([...keypair.subarray(0, 32), ...generateKeypairBytes().subarray(32)])
    assert.equal(signingKey(mixed), undefined)
  })
})
