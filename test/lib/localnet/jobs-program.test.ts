import {strict as assert} from 'node:assert'

import {getAccount, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, type TransactionInstruction} from '@solana/web3.js'

import {
  accountDiscriminator,
  decodeJobAccount,
  decodeMarketAccount,
  decodeRunAccount,
  findVaultAddress,
  ipfsHashToBytes,
  JOB_ACCOUNT_SIZE,
  jobsInstruction,
  JobState,
  QueueType,
  RUN_ACCOUNT_SIZE,
} from '../../../src/lib/market/index.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {anyKey, JOB_CID, listInstruction, sendInstructions, workInstruction} from '../../helpers/market.js'

const RESULT = 'Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD'
const PRICE = 100n

describe('localnet jobs program', function () {
  this.timeout(60_000)
  const t = useLocalnet()
  let vault: PublicKey

  before(() => {
    ;[vault] = findVaultAddress(t.programId, t.market, t.mint)
  })

  const send = (instructions: TransactionInstruction[], signers: Keypair[]) =>
    sendInstructions(t, instructions, signers)

  /** A keypair with SOL and `tokens` base units in its associated token account. */
  function account(tokens = 1n): {keypair: Keypair; tokens: PublicKey} {
    const keypair = Keypair.generate()
    t.ln.node.fund(keypair.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL), tokens})
    return {keypair, tokens: getAssociatedTokenAddressSync(t.mint, keypair.publicKey, true)}
  }

  const balance = async (tokenAccount: PublicKey) => (await getAccount(t.connection, tokenAccount)).amount
  const market = async () => decodeMarketAccount((await t.connection.getAccountInfo(t.market))!.data)
  const job = async (key: PublicKey) => decodeJobAccount((await t.connection.getAccountInfo(key))!.data)

  function listIx(
    payer: {keypair: Keypair; tokens: PublicKey},
    jobKey: Keypair,
    run: Keypair,
    timeout = 3600n,
    authority = payer.keypair.publicKey,
  ) {
    return listInstruction({
      programId: t.programId,
      market: t.market,
      mint: t.mint,
      payer: payer.keypair.publicKey,
      job: jobKey.publicKey,
      run: run.publicKey,
      timeout,
      authority,
    })
  }

  async function list(payer = account(10_000_000n), timeout = 3600n): Promise<{payer: typeof payer; job: Keypair}> {
    const jobKey = Keypair.generate()
    const run = Keypair.generate()
    const answer = await send([listIx(payer, jobKey, run, timeout)], [payer.keypair, jobKey, run])
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))
    return {payer, job: jobKey}
  }

  const workIx = (node: Keypair, run: Keypair) => workInstruction(t, node.publicKey, run.publicKey)

  /** Lets nodes take the jobs earlier tests left queued, so the next `list` or `work` starts from an empty queue. */
  async function drainQueue() {
    while ((await market()).queueType === QueueType.JOB) {
      const node = account()
      const run = Keypair.generate()
      assert.equal((await send([workIx(node.keypair, run)], [node.keypair, run])).error, undefined)
    }
  }

  async function runsOf(jobKey: PublicKey) {
    const runs = await t.connection.getProgramAccounts(t.programId, {
      filters: [{dataSize: RUN_ACCOUNT_SIZE}, {memcmp: {offset: 8, bytes: jobKey.toBase58()}}],
    })
    return runs.map((r) => ({pubkey: r.pubkey, ...decodeRunAccount(r.account.data)}))
  }

  it('opened a default market with the reference layout, open to any node', async () => {
    const info = (await t.connection.getAccountInfo(t.market))!
    assert.ok(info.owner.equals(t.programId))
    assert.deepEqual(info.data.subarray(0, 8), accountDiscriminator('MarketAccount'))
    const m = await market()
    assert.equal(m.jobTimeout, 7200n)
    assert.equal(m.jobPrice, PRICE)
    assert.ok(m.vault.equals(vault))
    assert.ok(m.nodeAccessKey.equals(SystemProgram.programId))
    const vaultAccount = await getAccount(t.connection, vault)
    assert.ok(vaultAccount.mint.equals(t.mint) && vaultAccount.owner.equals(vault))
  })

  it('list: creates the job, deposits price × timeout into the vault and queues the job', async () => {
    const vaultBefore = await balance(vault)
    const {payer, job: jobKey} = await list(account(10_000_000n), 3600n)
    const info = await t.connection.getAccountInfo(jobKey.publicKey)
    assert.equal(info?.data.length, JOB_ACCOUNT_SIZE)
    assert.deepEqual(info?.data.subarray(0, 8), accountDiscriminator('JobAccount'))
    const j = await job(jobKey.publicKey)
    assert.equal(j.state, JobState.QUEUED)
    assert.equal(j.price, PRICE)
    assert.equal(j.timeout, 3600n)
    assert.ok(
      j.payer.equals(payer.keypair.publicKey) && j.project.equals(payer.keypair.publicKey) && j.market.equals(t.market),
    )
    assert.deepEqual(j.ipfsJob, ipfsHashToBytes(JOB_CID))
    assert.equal(await balance(vault), vaultBefore + PRICE * 3600n)
    assert.equal(await balance(payer.tokens), 10_000_000n - PRICE * 3600n)
    const m = await market()
    assert.equal(m.queueType, QueueType.JOB)
    assert.ok(m.queue.some((k) => k.equals(jobKey.publicKey)))
    // with no node waiting, the run account is not kept
    assert.deepEqual(await runsOf(jobKey.publicKey), [])
    const byPayer = await t.connection.getProgramAccounts(t.programId, {
      filters: [
        {dataSize: JOB_ACCOUNT_SIZE},
        {memcmp: {offset: 8 + 32 * 4, bytes: payer.keypair.publicKey.toBase58()}},
      ],
    })
    assert.deepEqual(
      byPayer.map((a) => a.pubkey.toBase58()),
      [jobKey.publicKey.toBase58()],
    )
  })

  it("list without the payer's signature fails (AccountNotSigner) and moves nothing", async () => {
    const payer = account(10_000_000n)
    const authority = Keypair.generate()
    t.ln.node.fund(authority.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL)})
    const jobKey = Keypair.generate()
    const run = Keypair.generate()
    const ix = listIx(payer, jobKey, run, 3600n, authority.publicKey)
    ix.keys[5]!.isSigner = false // payer
    const vaultBefore = await balance(vault)
    const lamportsBefore = await t.connection.getBalance(payer.keypair.publicKey)
    const answer = await send([ix], [authority, jobKey, run])
    assert.equal(answer.error?.code, -32002)
    assert.deepEqual(answer.error?.data?.err, {InstructionError: [1, {Custom: 3010}]})
    assert.equal(await balance(vault), vaultBefore)
    assert.equal(await balance(payer.tokens), 10_000_000n)
    assert.equal(await t.connection.getBalance(payer.keypair.publicKey), lamportsBefore)
    assert.equal(await t.connection.getAccountInfo(jobKey.publicKey), null)
  })

  it("list with too few tokens fails with the token program's insufficient funds and moves nothing", async () => {
    const payer = account(PRICE * 3600n - 1n)
    const jobKey = Keypair.generate()
    const run = Keypair.generate()
    const vaultBefore = await balance(vault)
    const lamportsBefore = await t.connection.getBalance(payer.keypair.publicKey)
    const answer = await send([listIx(payer, jobKey, run)], [payer.keypair, jobKey, run])
    assert.deepEqual(answer.error?.data?.err, {InstructionError: [1, {Custom: 1}]})
    assert.match(answer.error!.message, /custom program error: 0x1$/)
    assert.equal(await balance(vault), vaultBefore)
    assert.equal(await balance(payer.tokens), PRICE * 3600n - 1n)
    assert.equal(await t.connection.getBalance(payer.keypair.publicKey), lamportsBefore, 'not even rent or the fee')
    assert.equal(await t.connection.getAccountInfo(jobKey.publicKey), null)
  })

  it('work then finish: the node takes the queued job, is paid for its time, the payer gets the rest back', async () => {
    await drainQueue()
    const {payer, job: jobKey} = await list(account(10_000_000n), 3600n)
    const node = account()
    const run = Keypair.generate()
    assert.equal((await send([workIx(node.keypair, run)], [node.keypair, run])).error, undefined)
    const [started] = await runsOf(jobKey.publicKey)
    assert.ok(started?.pubkey.equals(run.publicKey) && started.node.equals(node.keypair.publicKey))
    assert.equal((await market()).queueType, QueueType.EMPTY)

    const vaultBefore = await balance(vault)
    const finish = jobsInstruction(
      t.programId,
      'finish',
      {
        job: jobKey.publicKey,
        run: run.publicKey,
        market: t.market,
        vault,
        deposit: payer.tokens,
        user: node.tokens,
        payerJob: payer.keypair.publicKey,
        payerRun: node.keypair.publicKey,
        authority: node.keypair.publicKey,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {ipfsResult: ipfsHashToBytes(RESULT)},
    )
    assert.equal((await send([finish], [node.keypair])).error, undefined)
    const done = await job(jobKey.publicKey)
    assert.equal(done.state, JobState.DONE)
    assert.ok(done.node.equals(node.keypair.publicKey))
    assert.deepEqual(done.ipfsResult, ipfsHashToBytes(RESULT))
    const earned = (await balance(node.tokens)) - 1n
    assert.equal(earned, PRICE * (done.timeEnd - done.timeStart))
    assert.equal((await balance(payer.tokens)) + earned, 10_000_000n, 'the deposit is split between node and payer')
    assert.equal(await balance(vault), vaultBefore - PRICE * 3600n)
    assert.deepEqual(await runsOf(jobKey.publicKey), [])
    // finishing twice is refused: the run is gone
    const again = await send([finish], [node.keypair])
    assert.deepEqual(again.error?.data?.err, {InstructionError: [1, {Custom: 3012}]})
  })

  it('a waiting node gets the next listed job at once; stop takes a node out of the queue', async () => {
    await drainQueue()
    const node = account()
    const run = Keypair.generate()
    assert.equal((await send([workIx(node.keypair, run)], [node.keypair, run])).error, undefined)
    let m = await market()
    assert.equal(m.queueType, QueueType.NODE)
    const twice = Keypair.generate()
    assert.deepEqual((await send([workIx(node.keypair, twice)], [node.keypair, twice])).error?.data?.err, {
      InstructionError: [1, {Custom: 6014}],
    })

    const {job: jobKey} = await list()
    const [started] = await runsOf(jobKey.publicKey)
    assert.ok(started?.node.equals(node.keypair.publicKey))
    assert.equal((await market()).queueType, QueueType.EMPTY)

    const other = account()
    const run2 = Keypair.generate()
    assert.equal((await send([workIx(other.keypair, run2)], [other.keypair, run2])).error, undefined)
    const stop = jobsInstruction(
      t.programId,
      'stop',
      {market: t.market, node: other.keypair.publicKey, authority: other.keypair.publicKey},
      {},
    )
    assert.equal((await send([stop], [other.keypair])).error, undefined)
    m = await market()
    assert.equal(m.queueType, QueueType.EMPTY)
    assert.deepEqual((await send([stop], [other.keypair])).error?.data?.err, {InstructionError: [1, {Custom: 6011}]})
  })

  it('delist refunds the deposit and closes the job; only the project may delist', async () => {
    const {payer, job: jobKey} = await list(account(10_000_000n), 1000n)
    const delistIx = (authority: Keypair) =>
      jobsInstruction(
        t.programId,
        'delist',
        {
          job: jobKey.publicKey,
          market: t.market,
          deposit: payer.tokens,
          payer: payer.keypair.publicKey,
          vault,
          tokenProgram: TOKEN_PROGRAM_ID,
          authority: authority.publicKey,
        },
        {},
      )
    const stranger = account()
    assert.deepEqual((await send([delistIx(stranger.keypair)], [stranger.keypair])).error?.data?.err, {
      InstructionError: [1, {Custom: 6007}],
    })
    assert.equal((await send([delistIx(payer.keypair)], [payer.keypair])).error, undefined)
    assert.equal(await balance(payer.tokens), 10_000_000n)
    assert.equal(await t.connection.getAccountInfo(jobKey.publicKey), null)
    assert.ok(!(await market()).queue.some((k) => k.equals(jobKey.publicKey)))
  })

  it('extend takes the extra deposit and refuses a timeout that is not larger', async () => {
    const {payer, job: jobKey} = await list(account(10_000_000n), 1000n)
    const extendIx = (timeout: bigint) =>
      jobsInstruction(
        t.programId,
        'extend',
        {
          job: jobKey.publicKey,
          market: t.market,
          user: payer.tokens,
          vault,
          rewardsReflection: anyKey(),
          rewardsVault: anyKey(),
          authority: payer.keypair.publicKey,
          payer: payer.keypair.publicKey,
          rewardsProgram: anyKey(),
          tokenProgram: TOKEN_PROGRAM_ID,
        },
        {timeout},
      )
    assert.equal((await send([extendIx(1500n)], [payer.keypair])).error, undefined)
    assert.equal((await job(jobKey.publicKey)).timeout, 1500n)
    assert.equal(await balance(payer.tokens), 10_000_000n - PRICE * 1500n)
    assert.deepEqual((await send([extendIx(1500n)], [payer.keypair])).error?.data?.err, {
      InstructionError: [1, {Custom: 6008}],
    })
  })

  it('end stops a running job; quit hands a job back, and another node can claim it', async () => {
    await drainQueue()
    const node = account()
    const run = Keypair.generate()
    await send([workIx(node.keypair, run)], [node.keypair, run])
    const {payer, job: jobKey} = await list(account(10_000_000n), 2000n)
    // the node was waiting: `list` started the job on it, in the run account the poster passed
    const [running] = await runsOf(jobKey.publicKey)
    assert.ok(running && running.node.equals(node.keypair.publicKey))

    // the run's rent goes back to whoever paid it: here the poster
    const quit = jobsInstruction(
      t.programId,
      'quit',
      {job: jobKey.publicKey, run: running.pubkey, payer: payer.keypair.publicKey, authority: node.keypair.publicKey},
      {},
    )
    assert.equal((await send([quit], [node.keypair])).error, undefined)
    assert.deepEqual(await runsOf(jobKey.publicKey), [])
    assert.equal((await job(jobKey.publicKey)).state, JobState.QUEUED)

    const other = account()
    const run2 = Keypair.generate()
    const claim = jobsInstruction(
      t.programId,
      'claim',
      {
        job: jobKey.publicKey,
        run: run2.publicKey,
        market: t.market,
        stake: anyKey(),
        nft: anyKey(),
        metadata: anyKey(),
        payer: other.keypair.publicKey,
        authority: other.keypair.publicKey,
        systemProgram: SystemProgram.programId,
      },
      {},
    )
    assert.equal((await send([claim], [other.keypair, run2])).error, undefined)
    assert.ok((await runsOf(jobKey.publicKey))[0]?.node.equals(other.keypair.publicKey))

    const end = jobsInstruction(
      t.programId,
      'end',
      {
        job: jobKey.publicKey,
        market: t.market,
        run: run2.publicKey,
        deposit: payer.tokens,
        user: other.tokens,
        vault,
        payer: other.keypair.publicKey,
        authority: payer.keypair.publicKey,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {},
    )
    assert.equal((await send([end], [payer.keypair])).error, undefined)
    const stopped = await job(jobKey.publicKey)
    assert.equal(stopped.state, JobState.STOPPED)
    assert.equal((await balance(payer.tokens)) + (await balance(other.tokens)) - 1n, 10_000_000n)
    assert.deepEqual(await runsOf(jobKey.publicKey), [])
  })
})
