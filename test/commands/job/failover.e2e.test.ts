/**
 * Failover from the CLI (docs/jobs.md, "Failover") on a localnet of two markets: `localnet`, the cheap one, whose
 * only node has left (no free node), and `fits`, dearer, with a free node. `job post --queue-timeout` to the first
 * moves the job and it runs on the second; a node given to the first while the post is paused between its decision
 * and the delist takes the job (the program refuses the delist: no second listing); with no market left the job is
 * delisted and the post exits 3 with every deposit back; a bad queue timeout is exit 2 before anything is paid. The
 * queue timeout passes 30 times faster (queueTimeoutScale, localnet only); the chain is the localnet's as ever.
 */
import {strict as assert} from 'node:assert'
import {type ChildProcess, spawn} from 'node:child_process'
import {once} from 'node:events'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'

import {PAUSE_ENV} from '../../../src/lib/deployments/crash-points.js'
import {BIN} from '../../helpers/cli.js'
import {sandboxChain, useCliSandbox} from '../../helpers/cli-localnet.js'
import {eventually} from '../../helpers/eventually.js'
import {type FailoverLocalnet, startFailoverLocalnet} from '../../helpers/failover-localnet.js'

const TWO_MARKETS = `markets:
  - slug: localnet
    type: COMMUNITY
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.0001
  - slug: fits
    type: PREMIUM
    gpus: [NVIDIA A100 80GB PCIe]
    vram: 80
    price: 0.0002
`

interface MoveJson {
  from: string
  to: string | null
  why: string
  oldJob: string
  newJob: string | null
  outcome: string
}

interface PostJson {
  job: string
  market: string
  status: string
  moves: MoveJson[]
}

describe('gpunet job post --queue-timeout moves a job that waits', function () {
  this.timeout(240_000)
  const box = useCliSandbox()
  let localnet: FailoverLocalnet
  let env: NodeJS.ProcessEnv
  let file: string
  let bySlug: Map<string, string>
  let waitingNode: string
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => localnet.run(args, extra)

  before(async () => {
    localnet = await startFailoverLocalnet(box, TWO_MARKETS)
    ;({env, file, bySlug, waitingNode} = localnet)
  })

  /** A market's queue as `market get` shows it: the jobs waiting there. */
  async function queue(market: string): Promise<{queued: string[]; queue: {kind: string}}> {
    const got = await run(['market', 'get', market, '--json'])
    assert.equal(got.code, 0, got.stderr)
    return JSON.parse(got.stdout) as {queued: string[]; queue: {kind: string}}
  }

  /** The wallet's tokens now, in base units. */
  async function tokens(): Promise<bigint> {
    const chain = await sandboxChain({...box, env, run})
    const account = getAssociatedTokenAddressSync(chain.mint, chain.wallet.publicKey)
    return BigInt((await chain.connection.getTokenAccountBalance(account)).value.amount)
  }

  it('moves the job from the market with no free node to the next that fits, where it runs', async () => {
    const waiting = bySlug.get('localnet')!
    const result = await run(['job', 'post', file, '--market', waiting, '--queue-timeout', '1m', '--wait', '--json'])
    assert.equal(result.code, 0, result.stderr)
    const report = JSON.parse(result.stdout) as PostJson
    assert.equal(report.market, bySlug.get('fits'))
    assert.equal(report.status, 'COMPLETED')
    assert.equal(report.moves.length, 1)
    const [move] = report.moves
    assert.equal(move!.from, waiting)
    assert.equal(move!.to, bySlug.get('fits'))
    assert.equal(move!.outcome, 'moved')
    assert.equal(move!.newJob, report.job)
    assert.match(move!.why, /^still QUEUED after 60 s \(2 s at queueTimeoutScale 30\) on localnet$/)
    assert.match(
      result.stderr,
      new RegExp(`^Moved job ${move!.oldJob} from market localnet to fits \\(new job ${report.job}\\)`, 'm'),
    )
    // The old job: delisted, and it says where it went.
    const old = await run(['job', 'get', move!.oldJob, '--json'])
    assert.equal(old.code, 0, old.stderr)
    const shown = JSON.parse(old.stdout) as {state: string; movedTo: string}
    assert.equal(shown.state, 'STOPPED')
    assert.equal(shown.movedTo, report.job)
    assert.match(old.stderr, new RegExp(`moved to job ${report.job}`))
  })

  it('-q prints the job that finally runs', async () => {
    const result = await run(['job', 'post', file, '--market', bySlug.get('localnet')!, '--queue-timeout', '1m', '-q'])
    assert.equal(result.code, 0, result.stderr)
    const job = result.stdout.trim()
    const moved = /^Moved job \w+ from market localnet to fits \(new job (\w+)\)/m.exec(result.stderr)
    assert.ok(moved, result.stderr)
    assert.equal(job, moved[1])
  })

  it('a node that takes the job during the move ends it: the delist is refused, the job runs, no second listing', async () => {
    const waiting = bySlug.get('localnet')!
    const child = spawn(
      process.execPath,
      [BIN, 'job', 'post', file, '--market', waiting, '--queue-timeout', '1m', '--wait', '--json'],
      {env: {...process.env, NO_COLOR: '1', ...env, [PAUSE_ENV]: 'before-delist'}},
    )
    const out = collect(child)
    try {
      // Paused after its decision to move (the delist signed and journaled, not sent).
      await eventually('the post to pause', 60_000, async () =>
        /GPUNET_PAUSE_AT=before-delist: pausing/.test(out.stderr()) ? true : undefined,
      )
      const [old] = (await queue(waiting)).queued
      assert.ok(old, 'the paused post left its job queued')
      assert.equal((await run(['localnet', 'node', 'join', waitingNode])).code, 0)
      await eventually('the node to take the job', 30_000, async () => {
        const got = JSON.parse((await run(['job', 'get', old, '--json'])).stdout) as {state: string}
        return got.state === 'QUEUED' ? undefined : true
      })
    } finally {
      child.kill('SIGCONT')
    }
    const [code] = (await once(child, 'close')) as [number]
    assert.equal(code, 0, out.stderr())
    const report = JSON.parse(out.stdout()) as PostJson
    assert.equal(report.market, waiting, 'it ran where it was posted')
    assert.equal(report.status, 'COMPLETED')
    assert.deepEqual(
      report.moves.map((m) => [m.oldJob, m.outcome, m.newJob]),
      [[report.job, 'taken', null]],
    )
    assert.match(out.stderr(), /was taken by a node of market localnet before its delist landed/)
    // No listing of it on the other market.
    assert.notEqual((await queue(bySlug.get('fits')!)).queue.kind, 'jobs', 'nothing listed on fits')
    assert.equal((await run(['localnet', 'node', 'leave', waitingNode])).code, 0)
  })

  it('with no market left the job is delisted and the post exits 3 naming what was tried; the deposit is back', async () => {
    const before = await tokens()
    // Only the COMMUNITY market fits: nowhere to move to.
    const result = await run(['job', 'post', file, '--market-type', 'community', '--queue-timeout', '1m', '--json'])
    assert.equal(result.code, 3, result.stderr)
    const {error} = JSON.parse(result.stdout) as {
      error: {code: string; message: string; tried: string[]; moves: MoveJson[]}
    }
    assert.equal(error.code, 'no_market_left')
    assert.deepEqual(error.tried, [bySlug.get('localnet')])
    assert.equal(error.moves.length, 1)
    assert.equal(error.moves[0]!.outcome, 'ended')
    assert.equal(error.message, 'no node took the job on any market that fits: tried localnet; every deposit is back')
    assert.match(
      result.stderr,
      /^Delisted job \w+ from market localnet, its deposit back: .*; no market left to move it to$/m,
    )
    // Only the fees were spent: SOL. Every token of the deposit came back.
    assert.equal(await tokens(), before)
  })

  it('refuses a queue timeout out of range, or with --credits, with exit 2 before anything is paid', async () => {
    const before = await tokens()
    const market = bySlug.get('localnet')!
    for (const [args, pattern] of [
      [['--queue-timeout', '30s'], /--queue-timeout 30 s is shorter than a minute/],
      [['--queue-timeout', '3h'], /--queue-timeout 10800 s is longer than the market's job timeout \(7200 s\)/],
      [['--queue-timeout', '5m', '--credits'], /--queue-timeout is not taken with --credits/],
    ] as const) {
      const result = await run(['job', 'post', file, '--market', market, ...args])
      assert.equal(result.code, 2, result.stderr)
      assert.match(result.stderr, pattern)
      assert.match(result.stderr, /^Hint: /m)
    }
    assert.equal(await tokens(), before, 'nothing paid')
  })
})

/** Collects a child's stdout and stderr as they come. */
function collect(child: ChildProcess): {stdout: () => string; stderr: () => string} {
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  return {stdout: () => stdout, stderr: () => stderr}
}
