/**
 * Amounts: the exact words of each refusal (a user's only guide to a typo in an amount they are about to pay)
 * and the formatting edges mutation testing found unchecked (whole amounts, zeros inside the fraction).
 */
import {strict as assert} from 'node:assert'

import {isGpunetError} from '../../../src/lib/errors.js'
import {formatAmount, parseAmount} from '../../../src/lib/text/amounts.js'

function refusal(text: string, decimals: number, what: string) {
  try {
    parseAmount(text, decimals, what)
  } catch (error) {
    assert.ok(isGpunetError(error))
    return {code: error.code, exitCode: error.exitCode, message: error.message, hint: error.hint, fields: error.fields}
  }
  return assert.fail(`"${text}" was accepted`)
}

describe('amounts: refusals word for word, and formatting edges', () => {
  it('says what a number of tokens or SOL looks like', () => {
    assert.deepEqual(refusal('abc', 6, 'token'), {
      code: 'invalid_amount',
      exitCode: 2,
      message: 'invalid token amount "abc": not a non-negative decimal number',
      hint: 'Give a number of tokens, e.g. 1.5, with at most 6 decimals.',
      fields: {amount: 'abc'},
    })
    assert.equal(refusal('-1', 9, 'SOL').hint, 'Give a number of SOL, e.g. 1.5, with at most 9 decimals.')
  })

  it('names the decimals of the unit when there are too many', () => {
    assert.deepEqual(refusal('1.0000001', 6, 'token'), {
      code: 'invalid_amount',
      exitCode: 2,
      message: 'invalid token amount "1.0000001": more than 6 decimals',
      hint: 'A token has 6 decimals; e.g. 1.5, with at most 6 decimals.',
      fields: {amount: '1.0000001'},
    })
  })

  it('says why an amount is too large', () => {
    assert.deepEqual(refusal('18446744074', 9, 'SOL'), {
      code: 'amount_too_large',
      exitCode: 2,
      message: 'SOL amount "18446744074" is too large: at most 18446744073.709551615 fits in an account',
      hint: 'Amounts are u64 base units on chain; give a smaller amount.',
      fields: {amount: '18446744074'},
    })
  })

  it('formats whole amounts, small ones and zeros inside the fraction', () => {
    assert.equal(formatAmount(0n, 9), '0')
    assert.equal(formatAmount(3_000_000n, 6), '3')
    assert.equal(formatAmount(5n, 6), '0.000005')
    assert.equal(formatAmount(1_050_000n, 6), '1.05')
    assert.equal(formatAmount(1_000_500n, 6), '1.0005')
  })
})
