/**
 * The localnet's indexer and `gpunet job list` on it (issue 20): 30 jobs of two wallets across every state, delisted
 * ones included; only the wallet's own are listed, the filters hold, pages neither repeat nor skip a job, and the
 * index outlives a restart.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, LAMPORTS_PER_SOL, PublicKey} from '@solana/web3.js'

import {localnetNodeNetwork} from '../../../src/lib/localnet/nodes/node-network.js'
import {findVaultAddress, jobsInstruction} from '../../../src/lib/market/index.js'
import {NodeChainClient} from '../../../src/lib/node/chain-client.js'
import {runCli} from '../../helpers/cli.js'
import {JOB_CID, listInstruction, sendInstructions} from '../../helpers/market.js'
import {startTestLocalnet, type TestLocalnet} from '../../helpers/localnet.js'
import {removeDir} from '../../helpers/files.js'

interface Listed {
  total: number | null
  jobs: {job: string; state: string; node: string | null}[]
}

describe('the localnet indexer and job list', function () {
  this.timeout(120_000)
  let t: TestLocalnet
  const other = Keypair.generate()
  const node = Keypair.generate()
  const posted: {a: string[]; b: string[]} = {a: [], b: []}
  const states = new Map<string, string>()

  async function list(payer: Keypair): Promise<PublicKey> {
    const job = Keypair.generate()
    const run = Keypair.generate()
    const ix = listInstruction({...t, payer: payer.publicKey, job: job.publicKey, run: run.publicKey, timeout: 600n})
    const answer = await sendInstructions(t, [ix], [payer, job, run])
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))
    return job.publicKey
  }

  /** `gpunet job list` as `wallet`, on this in-process localnet. */
  async function cli(wallet: Keypair, ...args: string[]): Promise<Listed> {
    const file = join(t.dataDir, `${wallet.publicKey.toBase58()}.json`)
    writeFileSync(file, JSON.stringify([...wallet.secretKey]))
    const out = await runCli(['job', 'list', ...args, '--json'], {
      env: {GPUNET_LOCALNET_DIR: t.dataDir, GPUNET_WALLET: file, XDG_CONFIG_HOME: join(t.dataDir, 'xdg')},
    })
    assert.equal(out.code, 0, out.stderr)
    return JSON.parse(out.stdout) as Listed
  }

  before(async () => {
    t = await startTestLocalnet()
    t.ln.node.fund(other.publicKey, {lamports: BigInt(10 * LAMPORTS_PER_SOL), tokens: 100_000_000n})
    // In listing order: 24 jobs of the test wallet, then 6 of another.
    for (let i = 0; i < 24; i++) posted.a.push((await list(t.wallet)).toBase58())
    for (let i = 0; i < 6; i++) posted.b.push((await list(other)).toBase58())
    for (const job of [...posted.a, ...posted.b]) states.set(job, 'QUEUED')
    // A node takes the 10 oldest (the test wallet's), and finishes 5 of them.
    const chain = new NodeChainClient(localnetNodeNetwork(t.ln.node), node)
    await chain.prepare(BigInt(LAMPORTS_PER_SOL))
    const runs: PublicKey[] = []
    for (let i = 0; i < 10; i++) {
      runs.push(await chain.work())
      states.set(posted.a[i]!, 'RUNNING')
    }
    for (let i = 0; i < 5; i++) {
      const run = (await chain.run(runs[i]!))!
      await chain.finish(run.job, runs[i]!, JOB_CID)
      states.set(run.job.toBase58(), 'COMPLETED')
    }
    // Its poster delists 4 queued ones: their accounts close; the indexer keeps them, STOPPED.
    const vault = findVaultAddress(t.programId, t.market, t.mint)[0]
    for (const job of posted.a.slice(10, 14)) {
      const ix = jobsInstruction(
        t.programId,
        'delist',
        {
          job: new PublicKey(job),
          market: t.market,
          deposit: getAssociatedTokenAddressSync(t.mint, t.wallet.publicKey, true),
          payer: t.wallet.publicKey,
          vault,
          tokenProgram: TOKEN_PROGRAM_ID,
          authority: t.wallet.publicKey,
        },
        {},
      )
      const answer = await sendInstructions(t, [ix], [t.wallet])
      assert.equal(answer.error, undefined, JSON.stringify(answer.error))
      assert.equal(t.ln.node.chain.account(new PublicKey(job)), null)
      states.set(job, 'STOPPED')
    }
  })
  after(async () => {
    await t?.close()
    if (t) removeDir(t.dataDir)
  })

  it("lists only the wallet's jobs, newest first, in the states the chain gives them", async () => {
    const mine = await cli(t.wallet, '--limit', '50')
    assert.equal(mine.total, 24)
    assert.deepEqual(
      mine.jobs.map((j) => j.job),
      [...posted.a].reverse(),
    )
    for (const job of mine.jobs) assert.equal(job.state, states.get(job.job), job.job)
    const theirs = await cli(other, '--limit', '50')
    assert.deepEqual(
      theirs.jobs.map((j) => j.job),
      [...posted.b].reverse(),
    )
  })

  it('filters by state, node and market', async () => {
    const count = (state: string) => posted.a.filter((job) => states.get(job) === state).length
    for (const state of ['QUEUED', 'RUNNING', 'COMPLETED', 'STOPPED']) {
      const page = await cli(t.wallet, '--state', state, '--limit', '50')
      assert.equal(page.total, count(state), state)
      assert.ok(page.jobs.every((j) => j.state === state))
    }
    assert.deepEqual([count('QUEUED'), count('RUNNING'), count('COMPLETED'), count('STOPPED')], [10, 5, 5, 4])
    const byNode = await cli(t.wallet, '--node', node.publicKey.toBase58(), '--limit', '50')
    assert.equal(byNode.total, 10)
    assert.ok(byNode.jobs.every((j) => j.node === node.publicKey.toBase58()))
    assert.equal((await cli(t.wallet, '--market', t.market.toBase58())).total, 24)
    assert.equal((await cli(t.wallet, '--market', Keypair.generate().publicKey.toBase58())).total, 0)
  })

  it('pages neither repeat nor skip a job', async () => {
    const seen: string[] = []
    for (let offset = 0; offset < 24; offset += 7) {
      const page = await cli(t.wallet, '--limit', '7', '--offset', String(offset))
      assert.equal(page.total, 24)
      seen.push(...page.jobs.map((j) => j.job))
    }
    assert.deepEqual(seen, [...posted.a].reverse())
  })

  it('filters by outcome, paging over the matches: --outcome stopped holds every STOPPED job', async () => {
    const stopped = [...posted.a].reverse().filter((job) => states.get(job) === 'STOPPED')
    const first = await cli(t.wallet, '--outcome', 'stopped', '--limit', '3')
    assert.deepEqual(
      first.jobs.map((j) => j.job),
      stopped.slice(0, 3),
    )
    assert.equal(first.total, 4, 'the 24 jobs fit one page: all of them were read')
    const rest = await cli(t.wallet, '--outcome', 'stopped', '--limit', '3', '--offset', '3')
    assert.deepEqual(
      rest.jobs.map((j) => j.job),
      stopped.slice(3),
    )
    assert.equal(rest.total, 4, 'read to the last job: the total is known')
    const none = await cli(t.wallet, '--outcome', 'stopped', '--state', 'QUEUED')
    assert.deepEqual([none.total, none.jobs.length], [0, 0], 'a queued job has no outcome')
  })

  it("answers 429 with Retry-After past the network indexer's 20 requests per 30 s", async () => {
    const url = `${t.ln.runtime.rpcUrl}/jobs/?poster=${t.wallet.publicKey.toBase58()}&limit=1`
    let served = 0
    for (;;) {
      const res = await fetch(url)
      if (res.status === 429) {
        const wait = Number(res.headers.get('retry-after'))
        assert.ok(wait >= 1 && wait <= 30, `retry-after ${wait}`)
        break
      }
      assert.equal(res.status, 200)
      served++
      assert.ok(served <= 20, 'no more than 20 in the window')
    }
    // The tests above called it too, but on a loaded machine they may have ended more than 30 s ago: their calls
    // count only while in the window, so only the bound is asserted here: at most 20, then the 429.
  })

  it('keeps every job across a restart, delisted ones included; the chain source knows only live accounts', async () => {
    await t.close()
    t = await startTestLocalnet({dataDir: t.dataDir, wallet: t.wallet})
    const mine = await cli(t.wallet, '--limit', '50')
    assert.deepEqual(
      mine.jobs.map((j) => [j.job, j.state]),
      [...posted.a].reverse().map((job) => [job, states.get(job)]),
    )
    const chain = await cli(t.wallet, '--source', 'chain', '--limit', '50')
    assert.equal(chain.total, 20, 'the 4 delisted accounts are gone from the chain')
    assert.ok(chain.jobs.every((j) => states.get(j.job) === j.state))
  })
})
