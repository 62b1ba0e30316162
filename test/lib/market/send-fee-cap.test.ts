/**
 * The priority-fee cap, unit-tested on prepareTransaction against a stand-in RPC node (before issue 26 only the
 * CLI's end-to-end tests noticed a cap not kept). The cap bounds the whole priority fee (price x units), and the
 * price sent in the transaction's ComputeBudget instruction is the one the fee was computed from.
 */
import {strict as assert} from 'node:assert'

import {ComputeBudgetInstruction, ComputeBudgetProgram, Keypair, SystemProgram} from '@solana/web3.js'

import {openConnection} from '../../../src/lib/market/rpc/rpc.js'
import {MIN_COMPUTE_UNIT_PRICE, prepareTransaction} from '../../../src/lib/market/rpc/send.js'
import {startStandinRpc, type StandinRpc} from '../../helpers/standin.js'

describe('the priority-fee cap', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  const payer = Keypair.generate()
  const transfer = SystemProgram.transfer({
    fromPubkey: payer.publicKey,
    toPubkey: Keypair.generate().publicKey,
    lamports: 1,
  })

  beforeEach(async () => {
    rpc = await startStandinRpc()
    rpc.unitsConsumed = 10_000 // 13,000 units with the margin
  })
  afterEach(() => rpc.close())

  /** The compute-unit price the prepared transaction's budget instructions carry (0n when none). */
  const priceSent = (budget: Awaited<ReturnType<typeof prepareTransaction>>['budget']) => {
    const ix = budget.find(
      (i) =>
        i.programId.equals(ComputeBudgetProgram.programId) &&
        ComputeBudgetInstruction.decodeInstructionType(i) === 'SetComputeUnitPrice',
    )
    return ix ? BigInt(ComputeBudgetInstruction.decodeSetComputeUnitPrice(ix).microLamports) : 0n
  }

  it('lowers the price so the whole priority fee stays within the cap', async () => {
    rpc.prioritizationFees = [1_000_000]
    const prepared = await prepareTransaction(openConnection(rpc.url), [transfer], [payer], {
      priorityFee: true,
      maxPriorityFeeLamports: 1000n,
    })
    // 1000 lamports over 13,000 units: at most 76,923 micro-lamports a unit (76,923 x 13,000 / 1e6 = 999.999).
    assert.equal(prepared.fee.computeUnitLimit, 13_000)
    assert.equal(prepared.fee.computeUnitPrice, 76_923n)
    assert.equal(priceSent(prepared.budget), 76_923n)
    assert.equal(prepared.fee.priorityLamports, 1000n)
    assert.equal(prepared.fee.lamports, 5000n + 1000n)
  })

  it('keeps a price under the cap, and the least price when recent fees are lower', async () => {
    rpc.prioritizationFees = [50_000]
    const connection = openConnection(rpc.url)
    const under = await prepareTransaction(connection, [transfer], [payer], {
      priorityFee: true,
      maxPriorityFeeLamports: 1000n,
    })
    assert.equal(under.fee.computeUnitPrice, 50_000n)
    assert.equal(under.fee.priorityLamports, 650n)
    rpc.prioritizationFees = [0, 1, 2]
    const least = await prepareTransaction(connection, [transfer], [payer], {
      priorityFee: true,
      maxPriorityFeeLamports: 1000n,
    })
    assert.equal(least.fee.computeUnitPrice, MIN_COMPUTE_UNIT_PRICE)
  })

  it('sends no price at all when the cap is 0', async () => {
    rpc.prioritizationFees = [1_000_000]
    const prepared = await prepareTransaction(openConnection(rpc.url), [transfer], [payer], {
      priorityFee: true,
      maxPriorityFeeLamports: 0n,
    })
    assert.equal(prepared.fee.computeUnitPrice, 0n)
    assert.equal(priceSent(prepared.budget), 0n)
    assert.equal(prepared.fee.priorityLamports, 0n)
  })
})
