import {strict as assert} from 'node:assert'

import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import {Keypair, PublicKey, SystemProgram, SYSVAR_RENT_PUBKEY} from '@solana/web3.js'

import {computeCidV0} from '../../../src/lib/ipfs/cid.js'
import {decodeJobAccount, findVaultAddress, ipfsHashToBytes, jobsInstruction} from '../../../src/lib/market/index.js'
import {type CliSandbox, cliSandbox, type SandboxChain, sandboxChain} from '../../helpers/cli-localnet.js'
import {sendInstructions, workInstruction} from '../../helpers/market.js'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

const DEFINITION = {
  version: '0.1',
  type: 'container',
  ops: [{id: 'hello', type: 'container/run', args: {image: 'docker.io/library/ubuntu:24.04', cmd: 'echo hello'}}],
}

interface Report {
  job: string
  status: string
  node: string | null
  timeout: number
  startedAt: string | null
  endedAt: string | null
  result: string | null
  resultContent: unknown
  outcome: string | null
  resultView: {format: string} | null
  costSoFar: {baseUnits: string}
}

describe('gpunet job stop, extend, and a job a node runs', function () {
  this.timeout(90_000)
  let box: CliSandbox
  let chain: SandboxChain
  let file: string

  const tokens = async (owner: PublicKey) =>
    BigInt(
      (await chain.connection.getTokenAccountBalance(getAssociatedTokenAddressSync(chain.mint, owner, true))).value
        .amount,
    )
  const json = async <T>(args: string[]): Promise<T> => {
    const result = await box.run([...args, '--json'])
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}${result.stdout}`)
    return JSON.parse(result.stdout) as T
  }
  // The localnet's own node is off: the test acts as the node, so the job is posted all the same.
  const post = (timeout: number) =>
    json<Report>(['job', 'post', '--queue-anyway', '--file', file, '--timeout', String(timeout)])

  /** A node with SOL and a token account, acting through the jobs program as a node agent would. */
  const newNode = async () => {
    const node = Keypair.generate()
    assert.equal(
      (await box.run(['localnet', 'fund', node.publicKey.toBase58(), '--sol', '1', '--tokens', '0.000001'])).code,
      0,
    )
    // The airdrop also gives it the (zero) stake account `work` reads: the staking program is not emulated.
    await chain.connection.requestAirdrop(node.publicKey, 1)
    return node
  }
  /** The node asks for work; with no job queued it waits in the market queue. */
  const work = async (node: Keypair) => {
    const run = Keypair.generate()
    const answer = await sendInstructions(chain, [workInstruction(chain, node.publicKey, run.publicKey)], [node, run])
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))
  }

  before(async () => {
    box = cliSandbox()
    file = join(box.dir, 'job.json')
    writeFileSync(file, JSON.stringify(DEFINITION))
    assert.equal((await box.run(['localnet', 'start', '--detach', '--no-node'])).code, 0)
    chain = await sandboxChain(box)
  })
  after(async () => {
    await box.cleanup()
  })

  it('stop delists a queued job and the whole deposit comes back', async () => {
    const before = await tokens(chain.wallet.publicKey)
    const {job} = await post(3600)
    assert.equal(await tokens(chain.wallet.publicKey), before - 360_000n)
    const result = await box.run(['job', 'stop', job])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, new RegExp(`^Stopped job ${job}: it was queued, the deposit came back to \\w+$`, 'm'))
    assert.equal(await tokens(chain.wallet.publicKey), before)
    assert.equal(await chain.connection.getAccountInfo(new PublicKey(job)), null, 'a delisted job is closed')

    const second = await post(3600)
    const stopped = await box.run(['job', 'stop', second.job, '--json'])
    assert.equal(stopped.code, 0, stopped.stderr)
    const {action, state, outcome, status} = JSON.parse(stopped.stdout) as Record<string, string>
    // One vocabulary: the chain state the indexer lists it in, and its outcome; `status` deprecated, as before.
    assert.deepEqual(
      {action, state, outcome, status},
      {action: 'delist', state: 'STOPPED', outcome: 'stopped', status: 'DELISTED'},
    )

    // `--state` takes the state `job stop` said, in either case, and the list shows the outcome.
    const listed = await json<{jobs: {job: string; state: string; outcome: string | null}[]}>([
      'job',
      'list',
      '--state',
      'stopped',
    ])
    assert.deepEqual(
      listed.jobs.filter((j) => j.job === second.job),
      [{...listed.jobs.find((j) => j.job === second.job)!, state: 'STOPPED', outcome: 'stopped'}],
    )
    // `job get` of the delisted job shows what `job list` shows, instead of exit 7; `--wait` on it is exit 9.
    const got = await json<Report & {state: string}>(['job', 'get', second.job])
    assert.deepEqual([got.state, got.outcome, got.status], ['STOPPED', 'stopped', 'STOPPED'])
    const gotHuman = await box.run(['job', 'get', second.job])
    assert.equal(gotHuman.code, 0, gotHuman.stderr)
    assert.match(
      gotHuman.stdout,
      /^ {2}State +STOPPED\n {2}Outcome +stopped before it finished \(no result recorded\)$/m,
    )
    assert.match(gotHuman.stderr, /account is closed: shown as the indexer keeps it/)
    const waited = await box.run(['job', 'get', second.job, '--wait', '--json'])
    assert.equal(waited.code, 9, waited.stderr)
    assert.equal((JSON.parse(waited.stdout) as {error: {code: string}}).error.code, 'job_stopped')
    // An address that never held a job is still exit 7.
    assert.equal((await box.run(['job', 'get', Keypair.generate().publicKey.toBase58()])).code, 7)
  })

  it('extend charges price x the difference, and refuses a timeout that is not larger', async () => {
    const {job} = await post(100)
    const before = await tokens(chain.wallet.publicKey)
    const result = await box.run(['job', 'extend', job, '--timeout', '150'])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /^ {2}Timeout +100 s -> 150 s$/m)
    assert.match(result.stdout, /^ {2}Charged +0\.005 tokens$/m)
    assert.equal(await tokens(chain.wallet.publicKey), before - 50n * 100n)
    assert.equal(decodeJobAccount((await chain.connection.getAccountInfo(new PublicKey(job)))!.data).timeout, 150n)

    const smaller = await box.run(['job', 'extend', job, '--timeout', '150', '--json'])
    assert.equal(smaller.code, 2)
    assert.equal((JSON.parse(smaller.stdout) as {error: {code: string}}).error.code, 'timeout_not_larger')
    assert.equal(await tokens(chain.wallet.publicKey), before - 5000n)

    const tooMuch = await box.run(['job', 'extend', job, '--timeout', '100000000'])
    assert.equal(tooMuch.code, 4)
    assert.match(
      tooMuch.stderr,
      /Error: the wallet cannot pay for this job: it has [\d.]+ tokens, 9999\.985 tokens needed/,
    )
    assert.equal((await box.run(['job', 'stop', job])).code, 0)
  })

  it('shows RUNNING once a node took the job, then COMPLETED with the result the node posted', async () => {
    const node = await newNode()
    await work(node)
    // the node waits in the queue: `list` starts the job on it at once
    const posted = await post(3600)
    assert.equal(posted.status, 'RUNNING')
    assert.equal(posted.node, node.publicKey.toBase58())

    const running = await box.run(['job', 'get', posted.job])
    assert.equal(running.code, 0, running.stderr)
    assert.match(running.stdout, /^ {2}State +RUNNING$/m)
    assert.match(running.stdout, new RegExp(`^ {2}Node +${node.publicKey.toBase58()}$`, 'm'))
    assert.match(running.stdout, /^ {2}Started +\d{4}-\d\d-\d\dT/m)

    // A result in gpunet's own earlier format, as existing localnets hold them.
    const earlier = {
      job: posted.job,
      node: node.publicKey.toBase58(),
      status: 'success',
      isolated: true,
      notices: [],
      ops: [{id: 'hello', exitCode: 0, startedAt: 'a', endedAt: 'b', stdout: 'hello\n', stderr: '', stopped: false}],
    }
    const result = new TextEncoder().encode(JSON.stringify(earlier))
    const form = new FormData()
    form.append('file', new Blob([result]), 'result.json')
    assert.equal((await fetch(`${chain.contentStoreUrl}/api/v0/add`, {method: 'POST', body: form})).status, 200)
    const resultCid = computeCidV0(result).cid
    const runAddress = (
      await chain.connection.getProgramAccounts(chain.programId, {
        filters: [{memcmp: {offset: 8, bytes: posted.job}}],
      })
    )[0]!.pubkey
    const finish = jobsInstruction(
      chain.programId,
      'finish',
      {
        job: new PublicKey(posted.job),
        run: runAddress,
        market: chain.market,
        vault: findVaultAddress(chain.programId, chain.market, chain.mint)[0],
        deposit: getAssociatedTokenAddressSync(chain.mint, chain.wallet.publicKey),
        user: getAssociatedTokenAddressSync(chain.mint, node.publicKey),
        payerRun: chain.wallet.publicKey,
        payerJob: chain.wallet.publicKey,
        authority: node.publicKey,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {ipfsResult: ipfsHashToBytes(resultCid)},
    )
    const answer = await sendInstructions(chain, [finish], [node])
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))

    const done = await json<Report>(['job', 'get', posted.job, '--wait', '--wait-timeout', '5'])
    assert.equal(done.status, 'COMPLETED')
    assert.equal(done.result, resultCid)
    assert.deepEqual(done.resultContent, earlier)
    assert.equal(done.outcome, 'succeeded')
    assert.equal(done.resultView?.format, 'gpunet-1')
    assert.ok(done.startedAt && done.endedAt)
    const human = await box.run(['job', 'get', posted.job])
    assert.match(human.stdout, /^ {2}State +COMPLETED$/m)
    assert.match(human.stdout, new RegExp(`^ {2}Result +${resultCid}$`, 'm'))
    assert.match(human.stdout, /^Operation hello \(success, exit code 0\)\n {2}hello$/m)
  })

  it('post --wait-for running returns once a node runs a job that exposes a port', async () => {
    const node = await newNode()
    await work(node)
    const exposing = join(box.dir, 'serve.json')
    writeFileSync(
      exposing,
      JSON.stringify({...DEFINITION, ops: [{...DEFINITION.ops[0], args: {image: 'x', expose: 80}}]}),
    )
    const result = await box.run([
      'job',
      'post',
      '--queue-anyway',
      '--file',
      exposing,
      '--timeout',
      '60',
      '--wait-for',
      'running',
      '--wait-timeout',
      '10',
    ])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /^ {2}State +RUNNING$/m)
    assert.match(result.stderr, /^Job \w+ is RUNNING$/m)
    const job = /^Posted job (\w+)/m.exec(result.stdout)![1]!
    assert.equal((await box.run(['job', 'stop', job])).code, 0)
  })

  it("stop ends a running job: settled as COMPLETED (the program's end), the node paid for its time, the rest back", async () => {
    const node = await newNode()
    await work(node)
    const before = await tokens(chain.wallet.publicKey)
    const posted = await post(3600)
    assert.equal(posted.status, 'RUNNING')
    const result = await box.run(['job', 'stop', posted.job, '--json'])
    assert.equal(result.code, 0, result.stderr)
    const stopReport = JSON.parse(result.stdout) as {action: string; state: string; outcome: string}
    assert.equal(stopReport.action, 'end')
    const stopped = await json<Report & {state: string; cost: {baseUnits: string}}>(['job', 'get', posted.job])
    assert.equal(stopped.state, 'COMPLETED')
    assert.equal(stopped.outcome, 'stopped', 'ended before it finished: stopped, though the chain says COMPLETED')
    assert.deepEqual(
      [stopReport.state, stopReport.outcome],
      [stopped.state, stopped.outcome],
      '`job stop` reports the state and outcome `job get` then shows',
    )
    assert.equal(stopped.result, null)
    const earned = (await tokens(node.publicKey)) - 1n
    assert.equal(BigInt(stopped.cost.baseUnits), earned)
    assert.equal(stopped.costSoFar.baseUnits, stopped.cost.baseUnits, 'the deprecated member is kept')
    // `job list` no longer shows a plain COMPLETED: the outcome is beside it, as a member and a column.
    const listed = await json<{jobs: {job: string; state: string; outcome: string | null}[]}>(['job', 'list'])
    const row = listed.jobs.find((j) => j.job === posted.job)!
    assert.deepEqual([row.state, row.outcome], ['COMPLETED', 'stopped'])
    const listedHuman = await box.run(['job', 'list'])
    assert.match(listedHuman.stdout, /^ADDRESS +STATE +OUTCOME +MARKET/m)
    assert.match(listedHuman.stdout, new RegExp(`^${posted.job} +COMPLETED +stopped +\\w+`, 'm'))
    // The chain says COMPLETED, so --state STOPPED leaves it out and says where it is; --outcome stopped lists it.
    const byState = await box.run(['job', 'list', '--state', 'STOPPED', '--json'])
    assert.ok(!(JSON.parse(byState.stdout) as typeof listed).jobs.some((j) => j.job === posted.job))
    assert.match(byState.stderr, /poster stopped is COMPLETED on chain: --outcome stopped lists every stopped job/)
    const byOutcome = await json<typeof listed>(['job', 'list', '--outcome', 'stopped'])
    assert.deepEqual(
      byOutcome.jobs.filter((j) => j.job === posted.job).map((j) => [j.state, j.outcome]),
      [['COMPLETED', 'stopped']],
    )
    assert.ok(byOutcome.jobs.every((j) => j.outcome === 'stopped'))
    // Every command that reports an outcome exits 9 for it: job logs too.
    const logs = await box.run(['job', 'logs', posted.job])
    assert.equal(logs.code, 9, logs.stderr)
    assert.equal(await tokens(chain.wallet.publicKey), before - earned)

    const again = await box.run(['job', 'stop', posted.job])
    assert.equal(again.code, 2)
    assert.match(again.stderr, /Error: job \w+ is already COMPLETED/)
    // A --wait that sees the job ended before it finished exits 9 (stopped), the report printed all the same.
    const waited = await box.run(['job', 'get', posted.job, '--wait', '--json'])
    assert.equal(waited.code, 9)
    const report = JSON.parse(waited.stdout) as Report & {error: Record<string, unknown>}
    assert.equal(report.status, 'COMPLETED')
    assert.deepEqual(report.error, {
      code: 'job_stopped',
      message: `job ${posted.job} was ended before it finished: it has no result`,
      hint: 'its poster ended it (gpunet job stop); the node was paid for the time it ran',
      job: posted.job,
      state: 'COMPLETED',
      status: 'COMPLETED',
      outcome: 'stopped',
    })
    const waitedHuman = await box.run(['job', 'get', posted.job, '--wait'])
    assert.equal(waitedHuman.code, 9)
    assert.match(waitedHuman.stdout, /^ {2}State +COMPLETED$/m)
    assert.match(waitedHuman.stderr, /^Error: job \w+ was ended before it finished: it has no result$/m)
    assert.equal((await box.run(['job', 'get', posted.job])).code, 0, 'without --wait, reading it is no failure')
    // `--wait-for` takes either case, as `--state` does.
    assert.equal((await box.run(['job', 'get', posted.job, '--wait-for', 'DONE'])).code, 9)

    const againJson = await box.run(['job', 'stop', posted.job, '--json'])
    assert.deepEqual(JSON.parse(againJson.stdout).error, {
      code: 'job_over',
      message: `job ${posted.job} is already COMPLETED`,
      job: posted.job,
      state: 'COMPLETED',
      status: 'COMPLETED',
    })
  })

  it('post --wait exits 9 when the job is stopped while it runs', async () => {
    const node = await newNode()
    await work(node)
    const waiting = box.run(['job', 'post', '--queue-anyway', '--file', file, '--timeout', '3600', '--wait', '--json'])
    // The node waits in the queue, so the job runs at once: find it, and end it while `post --wait` follows it.
    let job: string | undefined
    for (let i = 0; i < 100 && !job; i++) {
      const list = await json<{jobs: {job: string; state: string}[]}>(['job', 'list', '--state', 'Running'])
      job = list.jobs[0]?.job
      if (!job) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.ok(job, 'the job runs')
    assert.equal((await box.run(['job', 'stop', job])).code, 0)
    const waited = await waiting
    assert.equal(waited.code, 9, waited.stderr)
    const report = JSON.parse(waited.stdout) as {job: string; state: string; outcome: string; error: {code: string}}
    assert.deepEqual(
      [report.job, report.state, report.outcome, report.error.code],
      [job, 'COMPLETED', 'stopped', 'job_stopped'],
    )
  })

  it('stop ends a job whose node has no token account: the account is made in the same transaction and paid', async () => {
    const node = Keypair.generate()
    assert.equal((await box.run(['localnet', 'fund', node.publicKey.toBase58(), '--sol', '1'])).code, 0)
    await chain.connection.requestAirdrop(node.publicKey, 1)
    const nodeAccount = getAssociatedTokenAddressSync(chain.mint, node.publicKey, true)
    // `work` reads the node's token account (its nft), so it has one while it takes the job, then closes it.
    const make = createAssociatedTokenAccountIdempotentInstruction(
      node.publicKey,
      nodeAccount,
      node.publicKey,
      chain.mint,
    )
    assert.equal((await sendInstructions(chain, [make], [node])).error, undefined)
    await work(node)
    const posted = await post(3600)
    assert.equal(posted.status, 'RUNNING')
    const close = createCloseAccountInstruction(nodeAccount, node.publicKey, node.publicKey)
    assert.equal((await sendInstructions(chain, [close], [node])).error, undefined)
    assert.equal(await chain.connection.getAccountInfo(nodeAccount), null, 'the node has no token account')
    // Fixed: the node is paid for whole seconds run, so one must pass.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const result = await box.run(['job', 'stop', posted.job, '--json'])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    const stopped = await json<Report>(['job', 'get', posted.job])
    assert.equal(stopped.status, 'COMPLETED')
    const earned = await tokens(node.publicKey)
    assert.ok(earned > 0n, 'the node is paid for the time it ran')
    assert.equal(BigInt(stopped.costSoFar.baseUnits), earned)
  })

  it('posts on a price-0 market from a wallet without a token account (made in the same transaction)', async () => {
    const authority = Keypair.generate()
    assert.equal((await box.run(['localnet', 'fund', authority.publicKey.toBase58(), '--sol', '1'])).code, 0)
    const market = Keypair.generate()
    const open = jobsInstruction(
      chain.programId,
      'open',
      {
        mint: chain.mint,
        market: market.publicKey,
        vault: findVaultAddress(chain.programId, market.publicKey, chain.mint)[0],
        authority: authority.publicKey,
        accessKey: SystemProgram.programId,
        rent: SYSVAR_RENT_PUBKEY,
        systemProgram: SystemProgram.programId,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {jobExpiration: 86_400n, jobPrice: 0n, jobTimeout: 600n, jobType: 0, nodeXnosMinimum: 0n},
    )
    const opened = await sendInstructions(chain, [open], [authority, market])
    assert.equal(opened.error, undefined, JSON.stringify(opened.error))

    const poster = Keypair.generate()
    const walletFile = join(box.dir, 'free-poster.json')
    writeFileSync(walletFile, JSON.stringify([...poster.secretKey]))
    assert.equal((await box.run(['localnet', 'fund', poster.publicKey.toBase58(), '--sol', '1'])).code, 0)
    const posterAccount = getAssociatedTokenAddressSync(chain.mint, poster.publicKey, true)
    assert.equal(await chain.connection.getAccountInfo(posterAccount), null, 'no token account yet')
    const posted = await json<Report>([
      'job',
      'post',
      '--queue-anyway',
      '--file',
      file,
      '--market',
      market.publicKey.toBase58(),
      '--wallet',
      walletFile,
    ])
    assert.equal(posted.status, 'QUEUED')
    assert.notEqual(await chain.connection.getAccountInfo(posterAccount), null, 'its token account was made')
    const stopped = await box.run(['job', 'stop', posted.job, '--wallet', walletFile])
    assert.equal(stopped.code, 0, stopped.stderr)
  })
})
