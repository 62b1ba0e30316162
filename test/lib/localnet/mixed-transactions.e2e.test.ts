/**
 * Transactions that mix the jobs program with system, SPL token, associated token account and compute-budget
 * instructions (issue 21): applied in full or not at all, the failing instruction's index named, and the jobs
 * program's token movements and the SVM's on the same accounts within one transaction.
 */
import {strict as assert} from 'node:assert'

import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  SystemProgram,
  SYSVAR_RENT_PUBKEY,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js'

import {localnetRewardsAccounts} from '../../../src/lib/localnet/rewards.js'
import {
  decodeJobAccount,
  findVaultAddress,
  ipfsHashToBytes,
  jobsInstruction,
  JobState,
} from '../../../src/lib/market/index.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {rpc} from '../../helpers/json-rpc.js'
import {JOB_CID} from '../../helpers/market.js'

describe('localnet: transactions mixing the jobs program with other programs', function () {
  this.timeout(60_000)
  const t = useLocalnet()

  const ata = (owner: PublicKey) => getAssociatedTokenAddressSync(t.mint, owner, true)
  const lamports = (key: PublicKey) => t.ln.node.chain.account(key)?.lamports ?? 0n
  const tokens = (key: PublicKey) => {
    const account = t.ln.node.chain.account(key)
    return account ? account.data.readBigUInt64LE(64) : null
  }

  function wallet(sol = 10, tokenUnits = 0n): Keypair {
    const kp = Keypair.generate()
    t.ln.node.fund(kp.publicKey, {lamports: BigInt(sol * LAMPORTS_PER_SOL), tokens: tokenUnits})
    return kp
  }

  async function send(instructions: TransactionInstruction[], signers: Keypair[], method = 'sendTransaction') {
    const tx = new Transaction({feePayer: signers[0]!.publicKey, ...t.ln.node.chain.latestBlockhash()}).add(
      ...instructions,
    )
    tx.sign(...signers)
    const options = method === 'sendTransaction' ? {encoding: 'base64', skipPreflight: true} : {encoding: 'base64'}
    return rpc(t.ln.runtime.rpcUrl, method, [tx.serialize().toString('base64'), options])
  }

  async function status(signature: string): Promise<{err: unknown} | null> {
    for (let i = 0; i < 50; i++) {
      const answer = await rpc(t.ln.runtime.rpcUrl, 'getSignatureStatuses', [[signature]])
      const value = (answer.result as {value: ({err: unknown} | null)[]}).value[0]
      if (value) return value
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return null
  }

  /** A market of its own with `price` per second, opened by a funded authority. */
  async function market(price: bigint): Promise<{key: PublicKey; vault: PublicKey}> {
    const authority = wallet(10, 1n)
    const keypair = Keypair.generate()
    const vault = findVaultAddress(t.programId, keypair.publicKey, t.mint)[0]
    const open = jobsInstruction(
      t.programId,
      'open',
      {
        mint: t.mint,
        market: keypair.publicKey,
        vault,
        authority: authority.publicKey,
        accessKey: SystemProgram.programId,
        rent: SYSVAR_RENT_PUBKEY,
        systemProgram: SystemProgram.programId,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {jobExpiration: 86_400n, jobPrice: price, jobTimeout: 7200n, jobType: 0, nodeXnosMinimum: 0n},
    )
    const answer = await send([open], [authority, keypair])
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))
    assert.deepEqual(await status(answer.result as string), {...(await status(answer.result as string)), err: null})
    return {key: keypair.publicKey, vault}
  }

  function list(m: {key: PublicKey; vault: PublicKey}, poster: Keypair, job: Keypair, run: Keypair) {
    return jobsInstruction(
      t.programId,
      'list',
      {
        job: job.publicKey,
        market: m.key,
        run: run.publicKey,
        user: ata(poster.publicKey),
        vault: m.vault,
        payer: poster.publicKey,
        ...localnetRewardsAccounts(t.mint),
        authority: poster.publicKey,
        tokenProgram: TOKEN_PROGRAM_ID,
        systemProgram: SystemProgram.programId,
      },
      {ipfsJob: ipfsHashToBytes(JOB_CID), timeout: 600n},
    )
  }

  it('creates a token account and lists a job on a price-0 market in one transaction', async () => {
    const m = await market(0n)
    const poster = Keypair.generate()
    t.ln.node.fund(poster.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL)})
    assert.equal(t.ln.node.chain.account(ata(poster.publicKey)), null, 'no token account yet')
    const job = Keypair.generate()
    const run = Keypair.generate()
    const answer = await send(
      [
        ComputeBudgetProgram.setComputeUnitLimit({units: 300_000}),
        createAssociatedTokenAccountIdempotentInstruction(
          poster.publicKey,
          ata(poster.publicKey),
          poster.publicKey,
          t.mint,
        ),
        list(m, poster, job, run),
      ],
      [poster, job, run],
    )
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))
    assert.deepEqual((await status(answer.result as string))?.err, null)
    assert.equal(tokens(ata(poster.publicKey)), 0n, 'the token account exists')
    const stored = decodeJobAccount(t.ln.node.chain.account(job.publicKey)!.data)
    assert.equal(stored.state, JobState.QUEUED)
  })

  it('lets the jobs program spend tokens an earlier instruction of the same transaction moved in', async () => {
    const m = await market(100n)
    const funder = wallet(10, 1_000_000n)
    const poster = wallet(10, 1n)
    const job = Keypair.generate()
    const run = Keypair.generate()
    const before = tokens(ata(funder.publicKey))!
    const answer = await send(
      [
        createTransferInstruction(ata(funder.publicKey), ata(poster.publicKey), funder.publicKey, 60_000n),
        list(m, poster, job, run),
      ],
      [poster, funder, job, run],
    )
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))
    assert.deepEqual((await status(answer.result as string))?.err, null)
    assert.equal(tokens(ata(funder.publicKey)), before - 60_000n)
    // 100 per second for 600 s: the deposit the transfer made possible, and the one token the poster had.
    assert.equal(tokens(ata(poster.publicKey)), 1n)
    assert.equal(tokens(m.vault), 60_000n)
  })

  it('a failing second instruction leaves every account as before, except the fee payer’s fee', async () => {
    const m = await market(100n)
    const poster = wallet(10, 10n) // far too few tokens for the deposit: `list` fails
    const stranger = Keypair.generate()
    const job = Keypair.generate()
    const run = Keypair.generate()
    const watched = [
      poster.publicKey,
      ata(poster.publicKey),
      ata(stranger.publicKey),
      job.publicKey,
      run.publicKey,
      m.vault,
    ]
    const before = watched.map((key) => t.ln.node.chain.account(key))
    const answer = await send(
      [
        createAssociatedTokenAccountIdempotentInstruction(
          poster.publicKey,
          ata(stranger.publicKey),
          stranger.publicKey,
          t.mint,
        ),
        list(m, poster, job, run),
      ],
      [poster, job, run],
    )
    assert.equal(answer.error, undefined, 'skipPreflight: the transaction lands, failed')
    const landed = await status(answer.result as string)
    assert.deepEqual((landed?.err as {InstructionError: [number, unknown]}).InstructionError[0], 1)
    const after = watched.map((key) => t.ln.node.chain.account(key))
    assert.equal(after[0]!.lamports, before[0]!.lamports - 15_000n, 'three signatures: 15,000 lamports, nothing else')
    assert.deepEqual(after.slice(1), before.slice(1))
  })

  it('preflight refuses the same transaction without taking even the fee, naming the failing instruction', async () => {
    const m = await market(100n)
    const poster = wallet(10, 10n)
    const stranger = Keypair.generate()
    const job = Keypair.generate()
    const run = Keypair.generate()
    const fee = lamports(poster.publicKey)
    const tx = new Transaction({feePayer: poster.publicKey, ...t.ln.node.chain.latestBlockhash()}).add(
      createAssociatedTokenAccountIdempotentInstruction(
        poster.publicKey,
        ata(stranger.publicKey),
        stranger.publicKey,
        t.mint,
      ),
      list(m, poster, job, run),
    )
    tx.sign(poster, job, run)
    for (const method of ['simulateTransaction', 'sendTransaction']) {
      const answer = await rpc(t.ln.runtime.rpcUrl, method, [tx.serialize().toString('base64'), {encoding: 'base64'}])
      const err =
        method === 'simulateTransaction'
          ? (answer.result as {value: {err: unknown}}).value.err
          : answer.error?.data?.err
      assert.equal((err as {InstructionError: [number, unknown]}).InstructionError[0], 1, method)
    }
    assert.equal(lamports(poster.publicKey), fee)
    assert.equal(t.ln.node.chain.account(ata(stranger.publicKey)), null)
  })

  it('simulates a mixed transaction that would succeed, and keeps nothing of it', async () => {
    const m = await market(0n)
    const poster = Keypair.generate()
    t.ln.node.fund(poster.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL)})
    const job = Keypair.generate()
    const tx = new Transaction({feePayer: poster.publicKey, ...t.ln.node.chain.latestBlockhash()}).add(
      createAssociatedTokenAccountIdempotentInstruction(
        poster.publicKey,
        ata(poster.publicKey),
        poster.publicKey,
        t.mint,
      ),
      list(m, poster, job, Keypair.generate()),
    )
    tx.partialSign(poster, job)
    const before = lamports(poster.publicKey)
    const answer = await rpc(t.ln.runtime.rpcUrl, 'simulateTransaction', [
      tx.serialize({requireAllSignatures: false}).toString('base64'),
      {encoding: 'base64'},
    ])
    const value = (answer.result as {value: {err: unknown; unitsConsumed: number; logs: string[]}}).value
    assert.equal(value.err, null, value.logs.join('\n'))
    assert.ok(value.unitsConsumed > 0, 'the token instructions report their units')
    assert.equal(lamports(poster.publicKey), before)
    assert.equal(t.ln.node.chain.account(ata(poster.publicKey)), null)
    assert.equal(t.ln.node.chain.account(job.publicKey), null)
  })

  it('charges the priority fee that compute-budget instructions ask for', async () => {
    const m = await market(0n)
    const poster = wallet(10, 1n)
    const job = Keypair.generate()
    const run = Keypair.generate()
    const before = lamports(poster.publicKey)
    const answer = await send(
      [
        ComputeBudgetProgram.setComputeUnitLimit({units: 100_000}),
        ComputeBudgetProgram.setComputeUnitPrice({microLamports: 1_000_000}),
        list(m, poster, job, run),
      ],
      [poster, job, run],
    )
    assert.deepEqual((await status(answer.result as string))?.err, null)
    const rent = t.ln.node.chain.account(job.publicKey)!.lamports
    // Three signatures (15,000) plus 1 lamport per unit for 100,000 units, and the job account's rent.
    const runRent = t.ln.node.chain.account(run.publicKey)?.lamports ?? 0n
    assert.equal(before - lamports(poster.publicKey), 15_000n + 100_000n + rent + runRent)
  })
})
