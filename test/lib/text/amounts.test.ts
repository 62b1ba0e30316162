import {strict as assert} from 'node:assert'

import {ExitCode, type GpunetError} from '../../../src/lib/errors.js'
import {amountJson, formatAmount, MAX_BASE_UNITS, parseAmount} from '../../../src/lib/text/amounts.js'

function refused(text: string, decimals = 6): GpunetError {
  try {
    parseAmount(text, decimals, 'token')
  } catch (error) {
    return error as GpunetError
  }
  assert.fail(`"${text}" was accepted`)
}

describe('token and SOL amounts', () => {
  it('parses decimals into exact base units', () => {
    assert.equal(parseAmount('1.5', 6, 'token'), 1_500_000n)
    assert.equal(parseAmount('0.000001', 6, 'token'), 1n)
    assert.equal(parseAmount('.5', 6, 'token'), 500_000n)
    assert.equal(parseAmount('7.', 6, 'token'), 7_000_000n)
    assert.equal(parseAmount(' 42 ', 9, 'SOL'), 42_000_000_000n)
    assert.equal(parseAmount('0', 9, 'SOL'), 0n)
    // No floating point on the way: 0.1 + 0.2 style errors cannot happen.
    assert.equal(parseAmount('123456789.123456', 6, 'token'), 123_456_789_123_456n)
  })

  it('accepts the largest u64 amount and refuses one more base unit with exit 2', () => {
    assert.equal(parseAmount('18446744073709.551615', 6, 'token'), MAX_BASE_UNITS)
    assert.equal(parseAmount('18446744073.709551615', 9, 'SOL'), MAX_BASE_UNITS)
    for (const text of ['18446744073709.551616', '99999999999999999999', '1e30'.replace('e30', '0'.repeat(30))]) {
      const error = refused(text)
      assert.equal(error.code, 'amount_too_large', text)
      assert.equal(error.exitCode, ExitCode.USAGE)
      assert.match(error.message, /too large: at most 18446744073709\.551615 fits/)
    }
    assert.equal(refused('18446744074', 9).code, 'amount_too_large')
  })

  it('refuses what is not a non-negative decimal, and more decimals than the unit has', () => {
    for (const text of ['', '.', '-1', '1e3', '1,5', '0x10', 'abc', '1.2.3', 'Infinity', 'NaN', '+1']) {
      const error = refused(text)
      assert.equal(error.code, 'invalid_amount', text)
      assert.equal(error.exitCode, ExitCode.USAGE)
      assert.equal(error.fields.amount, text)
    }
    const precise = refused('0.0000001')
    assert.equal(precise.code, 'invalid_amount')
    assert.match(precise.message, /more than 6 decimals/)
  })

  it('formats base units back, and amountJson keeps the exact base units', () => {
    assert.equal(formatAmount(1_500_000n, 6), '1.5')
    assert.equal(formatAmount(MAX_BASE_UNITS, 6), '18446744073709.551615')
    assert.deepEqual(amountJson(720_000n, 6, 'token'), {amount: 0.72, unit: 'token', baseUnits: '720000'})
  })
})
