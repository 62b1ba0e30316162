import {strict as assert} from 'node:assert'

import {isGpunetError} from '../../../src/lib/errors.js'
import {confirmSpend} from '../../../src/lib/market/rpc/confirm.js'
import {canPrompt} from '../../../src/lib/terminal/prompt.js'

describe('confirmSpend', () => {
  it('never asks on localnet or with --yes', async () => {
    await confirmSpend('localnet', 'Spend?', false)
    await confirmSpend('mainnet', 'Spend?', true)
  })

  it('without a terminal, refuses to spend on mainnet and goes on on devnet', async function () {
    if (canPrompt()) this.skip() // run from a terminal, it would ask
    await assert.rejects(
      confirmSpend('mainnet', 'Spend?', false),
      (error) => isGpunetError(error) && error.code === 'confirmation_required' && error.exitCode === 2,
    )
    await confirmSpend('devnet', 'Spend?', false)
  })
})
