/**
 * The arithmetic and the errors of market/send.ts, unit-tested against a stand-in RPC node (issue 26, area
 * `market-send`): the compute-unit limit and default, the base fee per distinct signer, the priority fee's rounding
 * and percentile, the accounts fees are looked up for, the fee's two printed forms, and how a refused simulation,
 * send or landed transaction becomes exit 4 or 5.
 */
import {strict as assert} from 'node:assert'

import {ComputeBudgetInstruction, ComputeBudgetProgram, Keypair, PublicKey, SystemProgram} from '@solana/web3.js'

import {openConnection} from '../../../src/lib/market/rpc.js'
import {
  type FeeQuote,
  feeJson,
  feeText,
  MIN_COMPUTE_UNIT_PRICE,
  prepareTransaction,
  sendJobsTransaction,
} from '../../../src/lib/market/send.js'
import {startStandinRpc, type StandinRpc} from '../../helpers/standin.js'

describe('market/send: quotes and errors', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  const payer = Keypair.generate()
  const transfer = (to = Keypair.generate().publicKey) =>
    SystemProgram.transfer({fromPubkey: payer.publicKey, toPubkey: to, lamports: 1})
  const on = {priorityFee: true, maxPriorityFeeLamports: 10n ** 12n}
  const off = {priorityFee: false, maxPriorityFeeLamports: 0n}

  beforeEach(async () => {
    rpc = await startStandinRpc()
  })
  afterEach(() => rpc.close())

  const budget = (prepared: Awaited<ReturnType<typeof prepareTransaction>>) =>
    prepared.budget.map((ix) => {
      assert.ok(ix.programId.equals(ComputeBudgetProgram.programId))
      const type = ComputeBudgetInstruction.decodeInstructionType(ix)
      return type === 'SetComputeUnitLimit'
        ? [type, ComputeBudgetInstruction.decodeSetComputeUnitLimit(ix).units]
        : [type, BigInt(ComputeBudgetInstruction.decodeSetComputeUnitPrice(ix).microLamports)]
    })

  it('limits compute units to the simulation x 1.2 + 1000, rounded up, at most 1.4M', async () => {
    rpc.unitsConsumed = 10_001
    let prepared = await prepareTransaction(openConnection(rpc.url), [transfer()], [payer], off)
    assert.equal(prepared.fee.computeUnitLimit, 13_002) // ceil(12,001.2) + 1000
    assert.deepEqual(budget(prepared), [['SetComputeUnitLimit', 13_002]])
    rpc.unitsConsumed = 1_300_000
    prepared = await prepareTransaction(openConnection(rpc.url), [transfer()], [payer], off)
    assert.equal(prepared.fee.computeUnitLimit, 1_400_000)
  })

  it('without units from the node, sets no limit and prices the default 200,000 a instruction', async () => {
    rpc.unitsConsumed = 0
    rpc.prioritizationFees = [1_000_000]
    const prepared = await prepareTransaction(openConnection(rpc.url), [transfer(), transfer()], [payer], on)
    assert.equal(prepared.fee.computeUnitLimit, null)
    assert.deepEqual(budget(prepared), [['SetComputeUnitPrice', 1_000_000n]])
    // 1,000,000 micro-lamports x 400,000 units = 400,000 lamports.
    assert.equal(prepared.fee.priorityLamports, 400_000n)
  })

  it('counts the base fee once per distinct signer', async () => {
    rpc.unitsConsumed = 1000
    const other = Keypair.generate()
    const one = await prepareTransaction(openConnection(rpc.url), [transfer()], [payer, payer], off)
    assert.equal(one.fee.baseLamports, 5000n)
    assert.equal(one.fee.lamports, 5000n)
    const two = await prepareTransaction(openConnection(rpc.url), [transfer()], [payer, other], off)
    assert.equal(two.fee.baseLamports, 10_000n)
    assert.equal(two.fee.priorityLamports, 0n)
    assert.equal(two.fee.computeUnitPrice, 0n)
  })

  it('pays the 75th percentile of recent fees, at least the minimum, rounding the fee up to a lamport', async () => {
    rpc.unitsConsumed = 1000 // 2200 units
    rpc.prioritizationFees = [80_000, 10_000, 70_000, 20_000, 60_000, 30_000, 50_000, 40_000]
    let prepared = await prepareTransaction(openConnection(rpc.url), [transfer()], [payer], on)
    // Sorted, index floor(0.75 x 8) = 6: 70,000.
    assert.equal(prepared.fee.computeUnitPrice, 70_000n)
    // 70,000 x 2200 / 1e6 = 154 lamports exactly.
    assert.equal(prepared.fee.priorityLamports, 154n)
    assert.equal(prepared.fee.lamports, 5154n)
    rpc.prioritizationFees = [12_345]
    prepared = await prepareTransaction(openConnection(rpc.url), [transfer()], [payer], on)
    // 12,345 x 2200 / 1e6 = 27.159: rounded up.
    assert.equal(prepared.fee.priorityLamports, 28n)
    rpc.prioritizationFees = [5, 1]
    prepared = await prepareTransaction(openConnection(rpc.url), [transfer()], [payer], on)
    assert.equal(prepared.fee.computeUnitPrice, MIN_COMPUTE_UNIT_PRICE)
    rpc.prioritizationFees = []
    prepared = await prepareTransaction(openConnection(rpc.url), [transfer()], [payer], on)
    assert.equal(prepared.fee.computeUnitPrice, MIN_COMPUTE_UNIT_PRICE)
    rpc.prioritizationFees = [MIN_COMPUTE_UNIT_PRICE + 1n].map(Number)
    prepared = await prepareTransaction(openConnection(rpc.url), [transfer()], [payer], on)
    assert.equal(prepared.fee.computeUnitPrice, MIN_COMPUTE_UNIT_PRICE + 1n)
  })

  it('looks fees up for the accounts written, the payer first, each once', async () => {
    rpc.unitsConsumed = 1000
    const target = Keypair.generate().publicKey
    const readOnly = {pubkey: Keypair.generate().publicKey, isSigner: false, isWritable: false}
    const ix = transfer(target)
    ix.keys.push(readOnly)
    await prepareTransaction(openConnection(rpc.url), [ix, transfer(target)], [payer], on)
    const asked = rpc.requests.find((r) => r.method === 'getRecentPrioritizationFees')!.params[0] as string[]
    assert.deepEqual(asked, [payer.publicKey.toBase58(), target.toBase58()])
    // No lookup at all when priority fees are off.
    const before = rpc.requests.length
    await prepareTransaction(openConnection(rpc.url), [transfer()], [payer], off)
    assert.ok(!rpc.requests.slice(before).some((r) => r.method === 'getRecentPrioritizationFees'))
  })

  it('prints a fee in both forms', () => {
    const fee: FeeQuote = {
      lamports: 20_000n,
      baseLamports: 5000n,
      priorityLamports: 15_000n,
      computeUnitPrice: 150n,
      computeUnitLimit: 100_000,
    }
    assert.deepEqual(feeJson(fee), {
      sol: 0.00002,
      lamports: '20000',
      priorityLamports: '15000',
      computeUnitPrice: '150',
      computeUnitLimit: 100_000,
    })
    assert.equal(feeText(fee), '0.00002 SOL (priority 0.000015 SOL: 150 micro-lamports/CU x 100000 CU)')
    assert.equal(
      feeText({...fee, computeUnitLimit: null}),
      '0.00002 SOL (priority 0.000015 SOL: 150 micro-lamports/CU)',
    )
    assert.equal(
      feeText({...fee, lamports: 5000n, priorityLamports: 0n, computeUnitPrice: 0n}),
      '0.000005 SOL (no priority fee)',
    )
  })

  it('a simulation that fails is exit 5 with the last three log lines; lacking funds is exit 4', async () => {
    const logs = ['Program a invoke [1]', 'one', 'two', 'three', 'Program a failed']
    rpc.simulationError = {err: {InstructionError: [0, {Custom: 6000}]}, logs}
    await assert.rejects(
      prepareTransaction(openConnection(rpc.url), [transfer()], [payer], off),
      (error: Error & {code: string; exitCode: number; hint: string}) => {
        assert.equal(error.code, 'transaction_failed')
        assert.equal(error.exitCode, 5)
        assert.match(error.message, /^the transaction would fail: \{"InstructionError":\[0,\{"Custom":6000\}\]\}$/)
        assert.equal(error.hint, 'program logs: two / three / Program a failed')
        return true
      },
    )
    for (const [err, line] of [
      [{InstructionError: [0, {Custom: 1}]}, 'Program log: Error: insufficient funds'],
      ['InsufficientFundsForFee', 'nothing'],
      [{InstructionError: [0, 'Custom']}, 'Program tokenkeg failed: custom program error: 0x1'],
      [{InstructionError: [0, {Custom: 2}]}, 'Transfer: insufficient lamports 5, need 10'],
    ] as const) {
      rpc.simulationError = {err, logs: [line]}
      await assert.rejects(
        prepareTransaction(openConnection(rpc.url), [transfer()], [payer], off),
        (error: {code: string; exitCode: number}) => {
          assert.deepEqual([error.code, error.exitCode], ['insufficient_balance', 4], JSON.stringify(err))
          return true
        },
      )
    }
    rpc.simulationError = {err: {InstructionError: [0, {Custom: 10}]}, logs: []}
    await assert.rejects(
      prepareTransaction(openConnection(rpc.url), [transfer()], [payer], off),
      (error: {code: string; hint?: string}) => {
        assert.equal(error.code, 'transaction_failed')
        assert.equal(error.hint, undefined, 'no logs, no hint')
        return true
      },
    )
  })

  it("a send the node refuses at preflight is exit 5 with the node's first line and logs", async () => {
    rpc.unitsConsumed = 1000
    const prepared = prepareTransaction(openConnection(rpc.url), [transfer()], [payer], off)
    await prepared
    rpc.sendError = {
      code: -32002,
      message: 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1771\nmore',
      data: {err: {InstructionError: [0, {Custom: 6001}]}, logs: ['Program x failed: custom program error: 0x1771']},
    }
    await assert.rejects(
      sendJobsTransaction(openConnection(rpc.url), [transfer()], [payer], off),
      (error: {code: string; exitCode: number; message: string; hint: string}) => {
        assert.equal(error.code, 'transaction_failed')
        assert.equal(error.exitCode, 5)
        assert.doesNotMatch(error.message, /more/)
        assert.match(error.message, /^the transaction failed: /)
        assert.equal(error.hint, 'program logs: Program x failed: custom program error: 0x1771')
        return true
      },
    )
    // web3.js words any error of a preflighted send as a failed simulation: the node's reason is kept.
    rpc.sendError = {code: -32603, message: 'Internal error'}
    await assert.rejects(
      sendJobsTransaction(openConnection(rpc.url), [transfer()], [payer], off),
      (error: {code: string; exitCode: number; message: string; hint?: string}) => {
        assert.deepEqual([error.code, error.exitCode], ['transaction_failed', 5])
        assert.match(error.message, /Internal error/)
        assert.equal(error.hint, undefined)
        return true
      },
    )
  })

  it('a transaction that lands with an error is refused with that error; one that lands is its signature', async () => {
    rpc.unitsConsumed = 1000
    rpc.statusError = {InstructionError: [0, {Custom: 6002}]}
    await assert.rejects(
      sendJobsTransaction(openConnection(rpc.url), [transfer()], [payer], off),
      (error: {code: string; message: string}) => {
        assert.equal(error.code, 'transaction_failed')
        assert.equal(error.message, 'the transaction failed: {"InstructionError":[0,{"Custom":6002}]}')
        return true
      },
    )
    rpc.statusError = null
    const {signature, fee} = await sendJobsTransaction(openConnection(rpc.url), [transfer()], [payer], off)
    assert.equal(signature.length > 80, true)
    assert.equal(fee.lamports, 5000n)
    const sent = rpc.sent.at(-1)!
    assert.ok(sent.verifySignatures(), 'signed by every signer it names')
    assert.ok(sent.feePayer?.equals(payer.publicKey))
    assert.ok(new PublicKey(sent.instructions[0]!.programId).equals(ComputeBudgetProgram.programId))
  })
})
