import {strict as assert} from 'node:assert'

import {
  createTransferInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
  getOrCreateAssociatedTokenAccount,
  TOKEN_PROGRAM_ID,
  transfer,
} from '@solana/spl-token'
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  SendTransactionError,
  sendAndConfirmTransaction,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js'

import {fundedKeypair, startTestLocalnet, type TestLocalnet, useLocalnet} from '../../helpers/localnet.js'
import {removeDir} from '../../helpers/files.js'
import {eventually} from '../../helpers/eventually.js'
import {rpc} from '../../helpers/json-rpc.js'

/** A signed transfer of `lamports` from `from`, with the localnet's current blockhash. */
async function signedTransfer(
  t: TestLocalnet,
  from: Keypair,
  lamports: number,
  to = Keypair.generate().publicKey,
): Promise<Transaction> {
  const tx = new Transaction({feePayer: from.publicKey, ...(await t.connection.getLatestBlockhash())})
  tx.add(SystemProgram.transfer({fromPubkey: from.publicKey, toPubkey: to, lamports}))
  tx.sign(from)
  return tx
}

describe('localnet JSON-RPC with a web3.js Connection', function () {
  this.timeout(60_000)
  const t = useLocalnet()

  it('answers getVersion, getHealth, getSlot and rent as a node does', async () => {
    assert.equal((await t.connection.getVersion())['solana-core'], '2.2.0')
    assert.deepEqual(await rpc(t.ln.runtime.rpcUrl, 'getHealth'), {jsonrpc: '2.0', result: 'ok', id: 1})
    assert.equal(typeof (await t.connection.getSlot()), 'number')
    assert.equal(await t.connection.getMinimumBalanceForRentExemption(165), 2_039_280)
    const unknown = await rpc(t.ln.runtime.rpcUrl, 'getBlock', [1])
    assert.equal(unknown.error?.code, -32601)
  })

  it('getFeeForMessage includes the priority fee, rounded up, and equals what the transaction is charged', async () => {
    const payer = await fundedKeypair(t)
    const sent = await t.connection.getMinimumBalanceForRentExemption(0)
    const {blockhash, lastValidBlockHeight} = await t.connection.getLatestBlockhash()
    const tx = new Transaction({feePayer: payer.publicKey, blockhash, lastValidBlockHeight})
    // 3 micro-lamports x 200,001 units = 600,003 micro-lamports: 0.600003 lamports, which the network rounds up to 1.
    tx.add(ComputeBudgetProgram.setComputeUnitLimit({units: 200_001}))
    tx.add(ComputeBudgetProgram.setComputeUnitPrice({microLamports: 3}))
    tx.add(
      SystemProgram.transfer({fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: sent}),
    )
    const quoted = (await t.connection.getFeeForMessage(tx.compileMessage())).value
    assert.equal(quoted, 5001)
    const before = await t.connection.getBalance(payer.publicKey)
    await sendAndConfirmTransaction(t.connection, tx, [payer])
    assert.equal(before - (await t.connection.getBalance(payer.publicKey)), quoted! + sent, 'the fee and what was sent')
    // 1,000,000 micro-lamports (1 lamport) a unit x 1,400,000 units: 1,400,000 lamports, nothing to round.
    const big = new Transaction({feePayer: payer.publicKey, blockhash, lastValidBlockHeight})
    big.add(ComputeBudgetProgram.setComputeUnitLimit({units: 1_400_000}))
    big.add(ComputeBudgetProgram.setComputeUnitPrice({microLamports: 1_000_000}))
    assert.equal((await t.connection.getFeeForMessage(big.compileMessage())).value, 5000 + 1_400_000)
    // A malformed compute-budget instruction has no fee (the transaction would be refused).
    const bad = new Transaction({feePayer: payer.publicKey, blockhash, lastValidBlockHeight})
    bad.add(
      new TransactionInstruction({programId: ComputeBudgetProgram.programId, keys: [], data: Buffer.from([3, 1])}),
    )
    assert.equal((await t.connection.getFeeForMessage(bad.compileMessage())).value, null)
    const garbage = await rpc(t.ln.runtime.rpcUrl, 'getFeeForMessage', [
      Buffer.from('not a message').toString('base64'),
    ])
    assert.equal(garbage.error?.code, -32602)
  })

  it('answers getRecentPrioritizationFees as a node with no competing traffic: recent slots, each 0', async () => {
    const slot = await t.connection.getSlot()
    const fees = await t.connection.getRecentPrioritizationFees({
      lockedWritableAccounts: [Keypair.generate().publicKey],
    })
    assert.ok(fees.every((f) => f.prioritizationFee === 0))
    // Consecutive slots up to the current one, from slot 0 on a young localnet (the 150-slot cap of an older
    // chain is tested on the dispatcher, test/lib/localnet/rpc-limits.test.ts).
    const last = fees.at(-1)!.slot
    assert.ok(last >= slot)
    assert.deepEqual(
      fees.map((f) => f.slot),
      Array.from({length: Math.min(150, last + 1)}, (_, i) => last - Math.min(150, last + 1) + 1 + i),
    )
    const tooMany = Array.from({length: 129}, () => Keypair.generate().publicKey.toBase58())
    const refused = await rpc(t.ln.runtime.rpcUrl, 'getRecentPrioritizationFees', [tooMany])
    assert.deepEqual(refused.error, {code: -32602, message: 'Too many inputs provided; max 128'})
    const malformed = await rpc(t.ln.runtime.rpcUrl, 'getRecentPrioritizationFees', [['nope']])
    assert.equal(malformed.error?.code, -32602)
    assert.match(String(malformed.error?.message), /Invalid param/)
  })

  it('airdrops, transfers SOL and confirms through signatureSubscribe', async () => {
    const alice = Keypair.generate()
    const bob = Keypair.generate()
    const airdrop = await t.connection.requestAirdrop(alice.publicKey, 2 * LAMPORTS_PER_SOL)
    await t.connection.confirmTransaction({signature: airdrop, ...(await t.connection.getLatestBlockhash())})
    assert.equal(await t.connection.getBalance(alice.publicKey), 2 * LAMPORTS_PER_SOL)

    const tx = new Transaction().add(
      SystemProgram.transfer({fromPubkey: alice.publicKey, toPubkey: bob.publicKey, lamports: LAMPORTS_PER_SOL / 2}),
    )
    const signature = await sendAndConfirmTransaction(t.connection, tx, [alice])
    assert.equal(await t.connection.getBalance(bob.publicKey), LAMPORTS_PER_SOL / 2)
    // the fee is 5000 lamports per signature
    assert.equal(await t.connection.getBalance(alice.publicKey), 1.5 * LAMPORTS_PER_SOL - 5000)
    const [status] = (await t.connection.getSignatureStatuses([signature])).value
    assert.equal(status?.err, null)
    assert.equal(status?.confirmationStatus, 'finalized')
  })

  it('transfers the payment token and reads token balances and accounts', async () => {
    const bob = Keypair.generate()
    const from = getAssociatedTokenAddressSync(t.mint, t.wallet.publicKey)
    const to = await getOrCreateAssociatedTokenAccount(t.connection, t.wallet, t.mint, bob.publicKey)
    await transfer(t.connection, t.wallet, from, to.address, t.wallet, 2_500_000n)
    assert.equal((await getAccount(t.connection, to.address)).amount, 2_500_000n)
    const balance = await t.connection.getTokenAccountBalance(to.address)
    assert.deepEqual(balance.value, {amount: '2500000', decimals: 6, uiAmount: 2.5, uiAmountString: '2.5'})
    const owned = await t.connection.getTokenAccountsByOwner(bob.publicKey, {mint: t.mint})
    assert.deepEqual(
      owned.value.map((a) => a.pubkey.toBase58()),
      [to.address.toBase58()],
    )
    const parsed = await t.connection.getParsedTokenAccountsByOwner(bob.publicKey, {programId: TOKEN_PROGRAM_ID})
    assert.equal(parsed.value[0]?.account.data.parsed.info.tokenAmount.amount, '2500000')
    const [a, missing] = await t.connection.getMultipleAccountsInfo([to.address, Keypair.generate().publicKey])
    assert.equal(a?.data.length, 165)
    assert.equal(missing, null)
  })

  it('refuses a tampered signature as a node does (-32003) and moves nothing', async () => {
    const before = await t.connection.getBalance(t.wallet.publicKey)
    const raw = (await signedTransfer(t, t.wallet, 1_000_000)).serialize()
    raw.writeUInt8(raw.readUInt8(raw.length - 1) ^ 0xff, raw.length - 1) // flip a byte of the signed message
    const answer = await rpc(t.ln.runtime.rpcUrl, 'sendTransaction', [raw.toString('base64'), {encoding: 'base64'}])
    assert.deepEqual(answer.error, {code: -32003, message: 'Transaction signature verification failure'})
    assert.equal(await t.connection.getBalance(t.wallet.publicKey), before)
  })

  it('refuses a blockhash it never issued with BlockhashNotFound', async () => {
    const tx = new Transaction({
      feePayer: t.wallet.publicKey,
      blockhash: Keypair.generate().publicKey.toBase58(),
      lastValidBlockHeight: 0,
    })
    tx.add(
      SystemProgram.transfer({
        fromPubkey: t.wallet.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1_000_000,
      }),
    )
    tx.sign(t.wallet)
    await assert.rejects(t.connection.sendRawTransaction(tx.serialize()), (error: SendTransactionError) => {
      assert.match(error.message, /Transaction simulation failed: Blockhash not found/)
      return true
    })
  })

  it('refuses a double spend: the same transaction twice is AlreadyProcessed, an overspend fails whole', async () => {
    const payer = Keypair.generate()
    t.ln.node.fund(payer.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL)})
    const tx = await signedTransfer(t, payer, LAMPORTS_PER_SOL / 4)
    await t.connection.sendRawTransaction(tx.serialize())
    const again = await rpc(t.ln.runtime.rpcUrl, 'sendTransaction', [
      tx.serialize().toString('base64'),
      {encoding: 'base64'},
    ])
    assert.equal(again.error?.code, -32002)
    assert.equal(again.error?.message, 'Transaction simulation failed: This transaction has already been processed')
    assert.equal(again.error?.data?.err, 'AlreadyProcessed')
    const balance = await t.connection.getBalance(payer.publicKey)
    assert.equal(balance, 0.75 * LAMPORTS_PER_SOL - 5000)

    const over = await signedTransfer(t, payer, LAMPORTS_PER_SOL)
    const refused = await rpc(t.ln.runtime.rpcUrl, 'sendTransaction', [
      over.serialize().toString('base64'),
      {encoding: 'base64'},
    ])
    assert.deepEqual(refused.error?.data?.err, {InstructionError: [0, {Custom: 1}]})
    assert.match(refused.error!.message, /Error processing Instruction 0: custom program error: 0x1/)
    assert.ok(refused.error?.data?.logs.some((l) => l.includes('insufficient lamports')))
    assert.equal(await t.connection.getBalance(payer.publicKey), balance, 'a refused preflight charges no fee')
  })

  it('lands a failing transaction sent with skipPreflight, charging only the fee', async () => {
    const payer = Keypair.generate()
    t.ln.node.fund(payer.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL)})
    const over = await signedTransfer(t, payer, 2 * LAMPORTS_PER_SOL)
    const signature = await t.connection.sendRawTransaction(over.serialize(), {skipPreflight: true})
    const [status] = (await t.connection.getSignatureStatuses([signature])).value
    assert.deepEqual(status?.err, {InstructionError: [0, {Custom: 1}]})
    assert.equal(await t.connection.getBalance(payer.publicKey), LAMPORTS_PER_SOL - 5000)
  })

  it('simulates without changing state, unsigned when sigVerify is off', async () => {
    const to = Keypair.generate().publicKey
    const tx = new Transaction({feePayer: t.wallet.publicKey, ...(await t.connection.getLatestBlockhash())})
    tx.add(
      createTransferInstruction(
        getAssociatedTokenAddressSync(t.mint, t.wallet.publicKey),
        getAssociatedTokenAddressSync(t.mint, to),
        t.wallet.publicKey,
        1n,
      ),
    )
    const simulated = await t.connection.simulateTransaction(tx)
    // the destination token account does not exist: the token program fails
    assert.notEqual(simulated.value.err, null)
    assert.ok((simulated.value.logs ?? []).length > 0)
    const ok = await t.connection.simulateTransaction(await signedTransfer(t, t.wallet, LAMPORTS_PER_SOL, to))
    assert.equal(ok.value.err, null)
    assert.equal(await t.connection.getBalance(to), 0)
  })
})

describe('localnet blockhash expiry', function () {
  this.timeout(30_000)

  it('refuses a blockhash older than 150 slots as BlockhashNotFound', async () => {
    // 2 ms slots: 150 slots pass in 300 ms.
    const t = await startTestLocalnet({slotMs: 2})
    try {
      const tx = await signedTransfer(t, t.wallet, LAMPORTS_PER_SOL)
      assert.deepEqual(
        ((await rpc(t.ln.runtime.rpcUrl, 'isBlockhashValid', [tx.recentBlockhash])).result as {value: boolean}).value,
        true,
      )
      await eventually(
        'the blockhash to expire',
        10_000,
        async () => {
          const answer = await rpc(t.ln.runtime.rpcUrl, 'isBlockhashValid', [tx.recentBlockhash])
          return (answer.result as {value: boolean}).value ? undefined : true
        },
        20,
      )
      const answer = await rpc(t.ln.runtime.rpcUrl, 'sendTransaction', [
        tx.serialize().toString('base64'),
        {encoding: 'base64'},
      ])
      assert.equal(answer.error?.code, -32002)
      assert.equal(answer.error?.data?.err, 'BlockhashNotFound')
    } finally {
      await t.close()
      removeDir(t.dataDir)
    }
  })
})
