/**
 * kill -9 of `job post --queue-timeout` at each point of its failover journal (deployments/crash-points.ts:
 * delist-saved, delist-sent, relist-saved, relist-sent), then `job get OLD`, which settles the move from the chain.
 * Afterwards exactly one listing of the job is alive (on either market's queue), and every deposit is accounted for on
 * chain: what left the wallet's tokens is what the markets' vaults gained, one deposit of the job that is listed. The
 * localnet has two markets without a free node (the first one's node has left, the second has none), so the job
 * moved stays queued where the test can count it.
 */
import {strict as assert} from 'node:assert'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {PublicKey} from '@solana/web3.js'

import {CRASH_ENV, FAILOVER_CRASH_POINTS} from '../../../src/lib/deployments/crash-points.js'
import {readMarket} from '../../../src/lib/market/jobs/jobs.js'
import {sandboxChain, type SandboxChain, useCliSandbox} from '../../helpers/cli-localnet.js'
import {type FailoverLocalnet, startFailoverLocalnet} from '../../helpers/failover-localnet.js'

const MARKETS = `markets:
  - slug: localnet
    type: COMMUNITY
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.0001
  - slug: later
    type: PREMIUM
    gpus: [NVIDIA A100 80GB PCIe]
    vram: 80
    price: 0.0002
    nodes: []
`

describe('kill -9 of a failover at each journal point: one live listing, every deposit on chain', function () {
  this.timeout(300_000)
  const box = useCliSandbox()
  let file: string
  let chain: SandboxChain
  let markets: Map<string, PublicKey>
  let run: FailoverLocalnet['run']

  before(async () => {
    const localnet = await startFailoverLocalnet(box, MARKETS)
    ;({file, run} = localnet)
    markets = new Map([...localnet.bySlug].map(([slug, address]) => [slug, new PublicKey(address)]))
    chain = await sandboxChain({...box, env: localnet.env, run})
  })

  /** The wallet's tokens and each market's vault, in base units; the jobs queued on each market. */
  async function ledger(): Promise<{wallet: bigint; vaults: bigint; queued: string[]}> {
    const balance = async (account: PublicKey) =>
      BigInt((await chain.connection.getTokenAccountBalance(account)).value.amount)
    const wallet = await balance(getAssociatedTokenAddressSync(chain.mint, chain.wallet.publicKey))
    let vaults = 0n
    const queued: string[] = []
    for (const address of markets.values()) {
      const market = await readMarket(chain.connection, chain.programId, address)
      vaults += await balance(market.vault)
      // Queue type 0 holds jobs; otherwise it holds nodes (or nothing).
      if (market.queueType === 0) queued.push(...market.queue.map((k) => k.toBase58()))
    }
    return {wallet, vaults, queued}
  }

  /** The deposit of a job listed on `slug` with that market's job timeout. */
  async function deposit(market: PublicKey): Promise<bigint> {
    const account = await readMarket(chain.connection, chain.programId, market)
    return account.jobPrice * account.jobTimeout
  }

  /** The jobs this wallet posted, as `job list` shows them (the indexer keeps closed ones too). */
  async function postedJobs(): Promise<{job: string; market: string}[]> {
    const listed = await run(['job', 'list', '--json', '--limit', '50'])
    assert.equal(listed.code, 0, listed.stderr)
    return (JSON.parse(listed.stdout) as {jobs: {job: string; market: string}[]}).jobs
  }

  for (const point of FAILOVER_CRASH_POINTS) {
    it(`killed at ${point}: job get OLD settles the move, one listing alive, every deposit accounted for`, async () => {
      const before = await ledger()
      assert.deepEqual(before.queued, [], 'nothing listed before')
      const seen = new Set((await postedJobs()).map((j) => j.job))
      const waiting = markets.get('localnet')!
      const killed = await run(['job', 'post', file, '--market', waiting.toBase58(), '--queue-timeout', '1m'], {
        [CRASH_ENV]: point,
      })
      assert.equal(killed.code, null, `killed, not exited: ${killed.stderr}`)
      assert.match(killed.stderr, new RegExp(`${CRASH_ENV}=${point}: killing this process here`))
      const old = (await postedJobs()).find((j) => !seen.has(j.job) && j.market === waiting.toBase58())
      assert.ok(old, 'the first listing is known')

      const got = await run(['job', 'get', old.job, '--json'])
      assert.equal(got.code, 0, got.stderr)
      assert.match(got.stderr, /\(settled from the failover journal, stage [a-z-]+\)/)
      const shown = JSON.parse(got.stdout) as {movedTo?: string}

      const after = await ledger()
      assert.equal(after.queued.length, 1, `exactly one live listing: ${after.queued.join(', ')}`)
      const [live] = after.queued
      // Every point of this journal lies after the decision: the job moved, and the old job says where.
      assert.equal(shown.movedTo, live)
      assert.notEqual(live, old.job)
      const expected = await deposit(markets.get('later')!)
      assert.equal(before.wallet - after.wallet, expected, 'the wallet paid one deposit, the old one came back')
      assert.equal(after.vaults - before.vaults, expected, 'the vaults hold that one deposit')

      // A second look changes nothing: the journal's row is settled.
      const again = await run(['job', 'get', old.job, '--json'])
      assert.equal(again.code, 0, again.stderr)
      assert.doesNotMatch(again.stderr, /settled from the failover journal/)
      assert.deepEqual((await ledger()).queued, [live])

      // Leave the chain as it was for the next point: the live listing stopped, its deposit back.
      const stopped = await run(['job', 'stop', live!])
      assert.equal(stopped.code, 0, stopped.stderr)
      const end = await ledger()
      assert.equal(end.wallet, before.wallet)
      assert.equal(end.vaults, before.vaults)
    })
  }

  it('killed at relist-saved: job post again settles the move before it posts, one listing of each job alive', async () => {
    const before = await ledger()
    const seen = new Set((await postedJobs()).map((j) => j.job))
    const waiting = markets.get('localnet')!
    const killed = await run(['job', 'post', file, '--market', waiting.toBase58(), '--queue-timeout', '1m'], {
      [CRASH_ENV]: 'relist-saved',
    })
    assert.equal(killed.code, null, killed.stderr)
    const old = (await postedJobs()).find((j) => !seen.has(j.job) && j.market === waiting.toBase58())!
    // A dry run sends nothing, so it settles nothing either.
    const dry = await run(['job', 'post', file, '--dry-run'])
    assert.equal(dry.code, 0, dry.stderr)
    assert.doesNotMatch(dry.stderr, /settled from the failover journal/)
    const again = await run(['job', 'post', file, '--market', waiting.toBase58(), '-q'])
    assert.equal(again.code, 0, again.stderr)
    assert.match(
      again.stderr,
      // Markets named as the failover names them, by their slugs.
      new RegExp(
        `^Moved job ${old.job} from market localnet to later .*\\(settled from the failover journal, stage list-saved\\)$`,
        'm',
      ),
    )
    const posted = again.stdout.trim()
    const after = await ledger()
    assert.equal(after.queued.length, 2, after.queued.join(', '))
    assert.ok(after.queued.includes(posted), 'the new post is listed')
    const [moved] = after.queued.filter((j) => j !== posted)
    assert.equal(
      (JSON.parse((await run(['job', 'get', old.job, '--json'])).stdout) as {movedTo: string}).movedTo,
      moved,
    )
    const deposits = (await deposit(markets.get('later')!)) + (await deposit(waiting))
    assert.equal(before.wallet - after.wallet, deposits)
    assert.equal(after.vaults - before.vaults, deposits)
    for (const job of after.queued) assert.equal((await run(['job', 'stop', job])).code, 0)
    assert.equal((await ledger()).wallet, before.wallet)
  })
})
