/**
 * The jobs program's instruction data at the edges of each integer type, which mutation testing found unchecked:
 * a u64 at or above 2^63 and a negative i64 tell the two 8-byte encodings apart.
 */
import {strict as assert} from 'node:assert'

import {decodeJobsInstructionData, encodeJobsInstructionData, MAX_BASE_UNITS} from '../../../src/lib/market/index.js'

describe('jobs instruction data at the integer edges', () => {
  it('keeps a u64 price above 2^63 and negative i64 times through encode and decode', () => {
    const args = {
      jobExpiration: -1n,
      jobPrice: MAX_BASE_UNITS,
      jobTimeout: -(2n ** 63n),
      jobType: 255,
      nodeXnosMinimum: 2n ** 128n - 1n,
    }
    const data = encodeJobsInstructionData('open', args)
    assert.equal(data.length, 8 + 8 + 8 + 8 + 1 + 16)
    // Little-endian: the u64 price is all 0xff; the i64 expiration -1 too; the timeout -2^63 ends in 0x80.
    assert.equal(data.subarray(16, 24).toString('hex'), 'ff'.repeat(8))
    assert.equal(data.subarray(24, 32).toString('hex'), `${'00'.repeat(7)}80`)
    assert.deepEqual(decodeJobsInstructionData(data), {name: 'open', args})
  })

  it('decodes data whose discriminator is not one of the program’s as null', () => {
    assert.equal(decodeJobsInstructionData(new Uint8Array(8)), null)
    assert.equal(decodeJobsInstructionData(new Uint8Array(40).fill(7)), null)
    assert.equal(decodeJobsInstructionData(new Uint8Array(7)), null)
  })
})
