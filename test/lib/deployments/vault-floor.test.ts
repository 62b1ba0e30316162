/**
 * floor.ts: what a vault keeps for the deployments paying from it, and what a withdraw may take. The numbers are
 * worked by hand from the rule (docs/deployment-manager.md, "The floor"), not from the code.
 */
import {strict as assert} from 'node:assert'

import {
  available,
  type ChainCosts,
  deploymentNeeds,
  type Floor,
  type Payer,
  paying,
  vaultFloor,
  withdrawAmounts,
} from '../../../src/lib/deployments/paying/floor.js'
import type {DeploymentStatus} from '../../../src/lib/deployments/types.js'

const costs: ChainCosts = {jobRent: 1_000n, runRent: 300n, vaultRent: 890n, signatureFee: 5n, priorityFee: 0n}
const MARKET = 'market-a'
const OTHER = 'market-b'
const prices = new Map([
  [MARKET, 2n],
  [OTHER, 7n],
])

function payer(status: DeploymentStatus, extra: Partial<Payer> = {}): Payer {
  return {id: `dep-${status}`, status, started_at: 1, replicas: 3, timeout: 10, time_scale: 1, market: MARKET, ...extra}
}

describe('the vault floor', () => {
  it('counts STARTING, RUNNING and a started INSUFFICIENT_FUNDS as listing, STOPPING as stopping, the rest not at all', () => {
    assert.equal(paying(payer('STARTING')), 'lists')
    assert.equal(paying(payer('RUNNING')), 'lists')
    assert.equal(paying(payer('INSUFFICIENT_FUNDS')), 'lists')
    // A start refused for want of the deposit lists nothing.
    assert.equal(paying(payer('INSUFFICIENT_FUNDS', {started_at: null})), null)
    assert.equal(paying(payer('STOPPING')), 'stops')
    for (const status of ['DRAFT', 'STOPPED', 'ERROR', 'ARCHIVED'] as const) assert.equal(paying(payer(status)), null)
  })

  it("keeps a listing of every replica: one timeout's tokens, the job's and run's rent, three signatures and a stop's", () => {
    // 10 minutes = 600 s at 2 base units a second, 3 replicas.
    assert.deepEqual(deploymentNeeds(payer('RUNNING'), 2n, costs), {
      tokens: 2n * 600n * 3n,
      lamports: (1_000n + 300n + 15n + 5n) * 3n,
    })
    // time_scale divides the timeout the jobs are listed with: 60 s.
    assert.equal(deploymentNeeds(payer('RUNNING', {time_scale: 10}), 2n, costs).tokens, 2n * 60n * 3n)
    // A priority fee cap counts in both the listing and the stop.
    assert.equal(
      deploymentNeeds(payer('RUNNING', {replicas: 1}), 2n, {...costs, priorityFee: 100n}).lamports,
      1_000n + 300n + 15n + 100n + 5n + 100n,
    )
    assert.deepEqual(deploymentNeeds(payer('STOPPING'), 2n, costs), {tokens: 0n, lamports: 15n})
    assert.deepEqual(deploymentNeeds(payer('STOPPED'), 2n, costs), {tokens: 0n, lamports: 0n})
    assert.deepEqual(deploymentNeeds(payer('RUNNING', {replicas: 0}), 2n, costs), {tokens: 0n, lamports: 0n})
  })

  it("sums every paying deployment on the vault, each at its market's price, and the vault's rent once", () => {
    const floor = vaultFloor(
      [
        payer('RUNNING', {id: 'a', replicas: 1}),
        payer('STARTING', {id: 'b', replicas: 2, market: OTHER}),
        payer('STOPPED', {id: 'c'}),
        payer('STOPPING', {id: 'd', replicas: 1}),
      ],
      prices,
      costs,
    )
    assert.deepEqual(floor, {
      tokens: 2n * 600n + 7n * 600n * 2n,
      lamports: 1_320n + 1_320n * 2n + 5n + 890n,
      payers: ['a', 'b', 'd'],
    })
  })

  it('is nothing for a vault nothing pays from, not even its rent', () => {
    assert.deepEqual(vaultFloor([payer('STOPPED'), payer('DRAFT')], new Map(), costs), {
      tokens: 0n,
      lamports: 0n,
      payers: [],
    })
  })

  it("refuses to guess a paying deployment's price", () => {
    assert.throws(
      () => vaultFloor([payer('RUNNING', {market: 'unread'})], prices, costs),
      /no price read for the market unread/,
    )
  })
})

describe('what a withdraw may take', () => {
  const floor: Floor = {tokens: 1_000n, lamports: 5_000n, payers: ['a']}
  const none: Floor = {tokens: 0n, lamports: 0n, payers: []}
  const held = {tokens: 4_000n, lamports: 9_000n, hasTokenAccount: true}

  it('is what the vault holds above its floor, never below 0', () => {
    assert.deepEqual(available(held, floor), {tokens: 3_000n, lamports: 4_000n})
    assert.deepEqual(available({tokens: 999n, lamports: 5_000n}, floor), {tokens: 0n, lamports: 0n})
    assert.deepEqual(available({tokens: 1_000n, lamports: 5_001n}, floor), {tokens: 0n, lamports: 1n})
  })

  it('takes everything above the floor when nothing is asked, and keeps the token account while anything pays', () => {
    assert.deepEqual(withdrawAmounts(held, floor, null, 890n), {
      tokens: 3_000n,
      lamports: 4_000n,
      closeTokenAccount: false,
    })
  })

  it('takes everything, and closes the token account, once nothing pays', () => {
    assert.deepEqual(withdrawAmounts(held, none, null, 890n), {
      tokens: 4_000n,
      lamports: 9_000n,
      closeTokenAccount: true,
    })
    // Without a token account there is none to close.
    assert.deepEqual(withdrawAmounts({...held, hasTokenAccount: false, tokens: 0n}, none, null, 890n), {
      tokens: 0n,
      lamports: 9_000n,
      closeTokenAccount: false,
    })
    // An emptied token account of an idle vault is still closed (its rent is the owner's).
    assert.deepEqual(withdrawAmounts({tokens: 0n, lamports: 0n, hasTokenAccount: true}, none, null, 890n), {
      tokens: 0n,
      lamports: 0n,
      closeTokenAccount: true,
    })
  })

  it('takes exactly what is asked, up to what the vault may give', () => {
    assert.deepEqual(withdrawAmounts(held, floor, {tokens: 3_000n, lamports: 4_000n}, 890n), {
      tokens: 3_000n,
      lamports: 4_000n,
      closeTokenAccount: false,
    })
    assert.deepEqual(withdrawAmounts(held, floor, {tokens: 1n, lamports: 0n}, 890n), {
      tokens: 1n,
      lamports: 0n,
      closeTokenAccount: false,
    })
    // Some of the tokens of an idle vault: its token account stays, it still holds the rest.
    assert.deepEqual(withdrawAmounts(held, none, {tokens: 3_999n, lamports: 0n}, 890n), {
      tokens: 3_999n,
      lamports: 0n,
      closeTokenAccount: false,
    })
    assert.deepEqual(withdrawAmounts(held, none, {tokens: 4_000n, lamports: 0n}, 890n), {
      tokens: 4_000n,
      lamports: 0n,
      closeTokenAccount: true,
    })
  })

  it('refuses one base unit or lamport more than the vault may give, saying what it may', () => {
    for (const ask of [
      {tokens: 3_001n, lamports: 0n},
      {tokens: 0n, lamports: 4_001n},
    ]) {
      assert.deepEqual(withdrawAmounts(held, floor, ask, 890n), {
        refused: 'exceeds_available',
        available: {tokens: 3_000n, lamports: 4_000n},
      })
    }
  })

  it('refuses a remainder of lamports under the rent-exempt minimum, and takes one at it or none', () => {
    assert.deepEqual(withdrawAmounts(held, none, {tokens: 0n, lamports: 8_111n}, 890n), {
      refused: 'under_rent',
      available: {tokens: 4_000n, lamports: 9_000n},
    })
    assert.equal('refused' in withdrawAmounts(held, none, {tokens: 0n, lamports: 8_110n}, 890n), false)
    assert.equal('refused' in withdrawAmounts(held, none, {tokens: 0n, lamports: 9_000n}, 890n), false)
    // Only tokens asked of a vault under its floor in SOL: its lamports are not what is refused.
    const short = {tokens: 4_000n, lamports: 100n, hasTokenAccount: true}
    assert.deepEqual(withdrawAmounts(short, floor, {tokens: 3_000n, lamports: 0n}, 890n), {
      tokens: 3_000n,
      lamports: 0n,
      closeTokenAccount: false,
    })
  })

  it('refuses a withdraw that would move nothing', () => {
    assert.deepEqual(withdrawAmounts({tokens: 1_000n, lamports: 5_000n, hasTokenAccount: true}, floor, null, 890n), {
      refused: 'nothing',
      available: {tokens: 0n, lamports: 0n},
    })
    assert.deepEqual(withdrawAmounts(held, floor, {tokens: 0n, lamports: 0n}, 890n), {
      refused: 'nothing',
      available: {tokens: 3_000n, lamports: 4_000n},
    })
    assert.deepEqual(withdrawAmounts({tokens: 0n, lamports: 0n, hasTokenAccount: false}, none, null, 890n), {
      refused: 'nothing',
      available: {tokens: 0n, lamports: 0n},
    })
  })
})
