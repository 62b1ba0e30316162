/**
 * The arithmetic and the errors of market/rpc/send.ts, unit-tested against a stand-in RPC node (issue 26, area
 * `market-send`): the compute-unit limit and default, the base fee per distinct signer, the priority fee's rounding
 * and percentile, the accounts fees are looked up for, the fee's two printed forms, and how a refused simulation,
 * send or landed transaction becomes exit 4 or 5.
 */
import {strict as assert} from 'node:assert'

import {
  ComputeBudgetInstruction,
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  VersionedTransaction,
} from '@solana/web3.js'
import bs58 from 'bs58'

import {openConnection} from '../../../src/lib/market/rpc/rpc.js'
import {
  type FeeQuote,
  feeJson,
  feeText,
  MIN_COMPUTE_UNIT_PRICE,
  prepareTransaction,
  sendJobsTransaction,
  sendPrepared,
} from '../../../src/lib/market/rpc/send.js'
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
      amount: 0.00002,
      unit: 'SOL',
      baseUnits: '20000',
      priority: {amount: 0.000015, unit: 'SOL', baseUnits: '15000'},
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

describe('market/send: what is asked of the node, and the sending loop', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  const payer = Keypair.generate()
  const transfer = () =>
    SystemProgram.transfer({fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1})
  const off = {priorityFee: false, maxPriorityFeeLamports: 0n}

  beforeEach(async () => {
    rpc = await startStandinRpc()
    rpc.unitsConsumed = 1000
  })
  afterEach(() => rpc.close())

  const asked = (method: string) => rpc.requests.filter((r) => r.method === method)
  /** The compute-budget instructions of a base64 transaction: [type, value]. */
  const budgetOf = (base64: string) => {
    const tx = VersionedTransaction.deserialize(Buffer.from(base64, 'base64'))
    const keys = tx.message.staticAccountKeys
    return tx.message.compiledInstructions
      .filter((ix) => keys[ix.programIdIndex]!.equals(ComputeBudgetProgram.programId))
      .map((ix) => [
        ix.data[0],
        Buffer.from(ix.data)
          .subarray(1)
          .readUIntLE(0, ix.data[0] === 2 ? 4 : 6),
      ])
  }

  it('simulates with the price it will pay and without signatures; sends with preflight, no node retries', async () => {
    rpc.prioritizationFees = [50_000]
    const on = {priorityFee: true, maxPriorityFeeLamports: 10n ** 12n}
    await sendJobsTransaction(openConnection(rpc.url), [transfer()], [payer], on)
    const [tx, options] = asked('simulateTransaction')[0]!.params as [string, Record<string, unknown>]
    // 2: SetComputeUnitLimit (1.4M while probing), 3: SetComputeUnitPrice.
    assert.deepEqual(budgetOf(tx), [
      [2, 1_400_000],
      [3, 50_000],
    ])
    assert.equal(options.sigVerify, false)
    assert.equal(options.replaceRecentBlockhash, true)
    assert.equal(options.commitment, 'confirmed')
    const [sentTx, sendOptions] = asked('sendTransaction')[0]!.params as [string, Record<string, unknown>]
    assert.deepEqual(budgetOf(sentTx), [
      [2, 2200],
      [3, 50_000],
    ])
    assert.notEqual(sendOptions.skipPreflight, true, 'web3.js leaves out a false skipPreflight')
    assert.equal(sendOptions.maxRetries, 0)
    assert.equal(sendOptions.preflightCommitment, 'confirmed')
    await sendJobsTransaction(openConnection(rpc.url), [transfer()], [payer], off)
    assert.deepEqual(budgetOf(asked('simulateTransaction')[1]!.params[0] as string), [[2, 1_400_000]])
  })

  it('uses the blockhash it was quoted with while it is fresh, and a new one after 10 s', async () => {
    const connection = openConnection(rpc.url)
    const fresh = await prepareTransaction(connection, [transfer()], [payer], off)
    const before = asked('getLatestBlockhash').length
    await sendPrepared(connection, fresh)
    assert.equal(asked('getLatestBlockhash').length, before)
    assert.equal(rpc.sent.at(-1)!.recentBlockhash, fresh.blockhash.blockhash)
    const stale = await prepareTransaction(connection, [transfer()], [payer], off)
    stale.blockhash.askedAt -= 10_001
    const again = asked('getLatestBlockhash').length
    await sendPrepared(connection, stale)
    assert.equal(asked('getLatestBlockhash').length, again + 1)
    assert.notEqual(rpc.sent.at(-1)!.recentBlockhash, stale.blockhash.blockhash)
  })

  it('takes finalized as confirmed; a processed one is polled until its blockhash expired, then read once more', async () => {
    const connection = openConnection(rpc.url)
    rpc.confirmationStatus = 'finalized'
    await sendJobsTransaction(connection, [transfer()], [payer], off)
    assert.equal(asked('getBlockHeight').length, 0, 'finalized at the first look')
    rpc.confirmationStatus = 'processed'
    rpc.heightStep = 1000
    const {signature} = await sendJobsTransaction(connection, [transfer()], [payer], off)
    assert.equal(asked('getBlockHeight').length, 1, 'it polled until the blockhash expired')
    assert.equal(signature, base58Signature(rpc.sent.at(-1)!))
    assert.equal(new Set(asked('sendTransaction').map((r) => r.params[0])).size, 2, 'signed once for each transaction')
  })

  it('keeps a blockhash through its last valid height, and says why it gives up', async () => {
    rpc.dropped = Number.POSITIVE_INFINITY
    // Each getBlockHeight moves 150: the first lands on lastValidBlockHeight itself, still valid.
    rpc.heightStep = 150
    const connection = openConnection(rpc.url)
    await assert.rejects(
      sendJobsTransaction(connection, [transfer()], [payer], off),
      (error: {code: string; message: string; hint: string}) => {
        assert.equal(error.code, 'transaction_expired')
        assert.equal(error.message, 'the transaction was not confirmed before its blockhash expired')
        assert.match(error.hint, /^nothing was done; the network may be congested/)
        return true
      },
    )
    assert.equal(asked('getBlockHeight').length, 6, 'two looks per blockhash, three blockhashes')
  })

  it('sends the same bytes again every 2 s, without preflight, until they land', async () => {
    rpc.dropped = 1
    const connection = openConnection(rpc.url)
    const started = Date.now()
    await sendJobsTransaction(connection, [transfer()], [payer], off)
    const sends = asked('sendTransaction')
    assert.equal(sends.length, 2)
    assert.equal(sends[0]!.params[0], sends[1]!.params[0])
    assert.equal((sends[1]!.params[1] as {skipPreflight: boolean}).skipPreflight, true)
    assert.ok(Date.now() - started >= 2000)
  })

  it('a resend the node refuses without a simulation is the RPC node failing (exit 5)', async () => {
    rpc.dropped = 1
    const connection = openConnection(rpc.url)
    setTimeout(() => (rpc.sendError = {code: -32603, message: 'Internal error'}), 500)
    await assert.rejects(
      sendJobsTransaction(connection, [transfer()], [payer], off),
      (error: {code: string; exitCode: number}) => {
        assert.deepEqual([error.code, error.exitCode], ['rpc_failed', 5])
        return true
      },
    )
  })

  it('a resend the node refuses with program logs is the transaction failing, with them as the hint', async () => {
    rpc.dropped = 1
    const connection = openConnection(rpc.url)
    setTimeout(
      () => (rpc.sendError = {code: -32002, message: 'Transaction failed', data: {logs: ['Program x failed']}}),
      500,
    )
    await assert.rejects(
      sendJobsTransaction(connection, [transfer()], [payer], off),
      (error: {code: string; hint: string}) => {
        assert.equal(error.code, 'transaction_failed')
        assert.equal(error.hint, 'program logs: Program x failed')
        return true
      },
    )
  })

  it('refuses a keypair whose halves differ, and an instruction whose signer was not given', async () => {
    const bad = Keypair.fromSecretKey(
      Uint8Array.from([...payer.secretKey.subarray(0, 32), ...Keypair.generate().publicKey.toBytes()]),
      {
        skipValidation: true,
      },
    )
    const connection = openConnection(rpc.url)
    await assert.rejects(
      sendJobsTransaction(connection, [transfer()], [bad], off),
      /the keypair of .* does not match its secret key/,
    )
    const other = Keypair.generate()
    const needsOther = SystemProgram.transfer({fromPubkey: other.publicKey, toPubkey: payer.publicKey, lamports: 1})
    await assert.rejects(
      sendJobsTransaction(connection, [needsOther], [payer], off),
      new RegExp(`no signer for ${other.publicKey.toBase58()}`),
    )
  })

  it('reads errors line by line: no hint without logs, a token 0x1 anywhere is lacking funds, first lines trimmed', async () => {
    rpc.simulationError = {err: {InstructionError: [0, {Custom: 3}]}, logs: null}
    await assert.rejects(
      prepareTransaction(openConnection(rpc.url), [transfer()], [payer], off),
      (error: {hint?: string}) => {
        assert.equal(error.hint, undefined)
        return true
      },
    )
    rpc.simulationError = {
      err: {InstructionError: [0, 'Custom']},
      logs: ['Program tokenkeg failed: custom program error: 0x1', 'Program tokenkeg consumed 100 units'],
    }
    await assert.rejects(
      prepareTransaction(openConnection(rpc.url), [transfer()], [payer], off),
      (error: {code: string}) => {
        assert.equal(error.code, 'insufficient_balance')
        return true
      },
    )
    rpc.simulationError = null
    rpc.sendError = {code: -32002, message: 'Transaction simulation failed: boom   \nmore', data: {logs: []}}
    await assert.rejects(
      sendJobsTransaction(openConnection(rpc.url), [transfer()], [payer], off),
      (error: {message: string}) => {
        assert.equal(error.message, 'the transaction failed: Transaction simulation failed: boom')
        return true
      },
    )
    rpc.sendError = null
    rpc.statusError = {InstructionError: [0, {Custom: 6002}]}
    await assert.rejects(
      sendJobsTransaction(openConnection(rpc.url), [transfer()], [payer], off),
      (error: {hint?: string}) => {
        assert.equal(error.hint, undefined, 'a landed failure has no logs to show')
        return true
      },
    )
  })
})

function base58Signature(tx: {signature: Buffer | null}): string {
  return bs58.encode(tx.signature!)
}
