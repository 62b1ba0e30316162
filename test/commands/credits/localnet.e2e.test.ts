/**
 * Credits end to end through the built CLI and real HTTP, against the localnet's credit routes (beside its
 * deployment manager) and its chain, its node running jobs as host processes: `localnet fund --credits`, the
 * balance, `job post --credits` -> the job runs -> `job extend --credits` -> `job stop --credits`, the ledger charged
 * as the market pays (price x the seconds it ran); a post sent again with the same Idempotency-Key (in sequence, at
 * once, and as a CLI re-run) lists one job, counted on the chain; another body under the key is refused; credits
 * that run short are exit 4 with nothing listed; the wallet's headers do not spend credits; a key left in progress
 * by a localnet stopped mid-request is answered from the chain, or freed, when it starts again.
 */
import {strict as assert} from 'node:assert'
import {spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Connection, Keypair, PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import {accountDiscriminator} from '../../../src/lib/market/codec/discriminator.js'
import {runCli} from '../../helpers/cli.js'
import {eventually} from '../../helpers/eventually.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'

type Amount = {amount: number; unit: string; baseUnits: string}
type Credits = {assigned: Amount; reserved: Amount; settled: Amount; available: Amount}

describe('credits on the localnet (end to end)', function () {
  this.timeout(300_000)
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  let connection: Connection
  let programId: PublicKey
  let manager: string
  let key: string

  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    runCli(args, {env: {...env, GPUNET_API_KEY: key, ...extra}, cwd: box.dir})
  const json = async <T = unknown>(args: string[], code = 0, extra: NodeJS.ProcessEnv = {}): Promise<T> => {
    const result = await cli([...args, '--json'], extra)
    assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}${result.stdout}`)
    return JSON.parse(result.stdout) as T
  }
  const balance = async () => (await json<{credits: Credits}>(['credits', 'balance'])).credits
  /**
   * Starts the stopped localnet again and answers the balance (its manager's and RPC's URLs may have changed). A start
   * right after `localnet stop` may still find the old process winding down ("already serves", no manager): again.
   */
  const balanceWhenUp = async () => {
    const status = await eventually('the localnet started again', 60_000, async () => {
      const started = await cli(['localnet', 'start', '--detach', '--runtime', 'host', '--json'])
      assert.equal(started.code, 0, started.stderr)
      const up = JSON.parse(started.stdout) as {rpcUrl: string; deploymentManager: string | null}
      return up.deploymentManager ? {...up, deploymentManager: up.deploymentManager} : undefined
    })
    manager = status.deploymentManager
    connection = new Connection(status.rpcUrl, 'confirmed')
    return balance()
  }
  /** The jobs on the chain whose project is `project`. */
  const jobsOf = async (project: string) =>
    (
      await connection.getProgramAccounts(programId, {
        filters: [
          {memcmp: {offset: 0, bytes: bs58.encode(accountDiscriminator('JobAccount'))}},
          {memcmp: {offset: 176, bytes: project}},
        ],
      })
    ).map((account) => account.pubkey.toBase58())
  const api = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${manager}${path}`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers},
      body: JSON.stringify(body),
    })

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    env = {...box.env, GPUNET_GATEWAY_PORT: '0'}
    key = ''
    const started = await cli(['localnet', 'start', '--detach', '--runtime', 'host', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const status = JSON.parse(started.stdout) as {rpcUrl: string; programId: string; deploymentManager: string}
    connection = new Connection(status.rpcUrl, 'confirmed')
    programId = new PublicKey(status.programId)
    manager = status.deploymentManager
    key = (await json<{key: string}>(['deployment', 'api-key', 'create', '--name', 'credits'])).key
    writeFileSync(
      join(box.dir, 'job.json'),
      JSON.stringify({
        version: '0.1',
        type: 'container',
        ops: [{id: 'svc', type: 'container/run', args: {image: 'ubuntu', cmd: ['sh', '-c', 'echo up; sleep 600']}}],
      }),
    )
  })
  after(async () => {
    await box?.cleanup()
  })

  it('fund -> balance -> post -> runs -> extend -> stop, the ledger charged per second as the market pays', async () => {
    const owner = (await json<{address: string}>(['wallet', 'address'])).address
    const funded = await json<{address: string; credits: {added: Amount; balance: Amount}}>([
      'localnet',
      'fund',
      '--credits',
      '2',
    ])
    assert.equal(funded.address, owner)
    assert.deepEqual(funded.credits.added, {amount: 2, unit: 'credit', baseUnits: '2000000'})
    const before = await balance()
    assert.equal(before.assigned.baseUnits, '2000000')
    assert.equal(before.available.baseUnits, '2000000')
    const human = await cli(['credits', 'balance'])
    assert.match(human.stdout, /Available +2 credits/)

    // The wallet's headers do not spend credits: the network's API takes them from an API key.
    const walletOnly = await json<{error: {code: string}}>(['credits', 'balance'], 6, {GPUNET_API_KEY: ''})
    assert.equal(walletOnly.error.code, 'api_key_required')

    type Posted = {
      job: string
      state: string
      project: string
      pricePerSecond: Amount
      signature: string
      credits: {charged: Amount; manager: string; project: string}
      idempotencyKey: string
    }
    const posted = await json<Posted>([
      'job',
      'post',
      'job.json',
      '--credits',
      '--timeout',
      '600',
      '--wait-for',
      'running',
    ])
    assert.equal(posted.state, 'RUNNING')
    assert.equal(posted.credits.manager, manager)
    // Listed by the API's wallet, as the network's API lists credit jobs: the project is not the poster's wallet.
    assert.equal(posted.project, posted.credits.project)
    assert.notEqual(posted.project, owner)
    const price = BigInt(posted.pricePerSecond.baseUnits)
    assert.ok(price > 0n)
    assert.equal(posted.credits.charged.baseUnits, String(price * 600n))
    assert.equal((await balance()).reserved.baseUnits, String(price * 600n))

    const extended = await json<{previousTimeout: number; timeout: number; charged: Amount}>([
      'job',
      'extend',
      posted.job,
      '--timeout',
      '900',
      '--credits',
    ])
    assert.deepEqual([extended.previousTimeout, extended.timeout], [600, 900])
    assert.equal(extended.charged.baseUnits, String(price * 300n))
    assert.equal((await balance()).reserved.baseUnits, String(price * 900n))
    const onChain = await json<{timeout: number}>(['job', 'get', posted.job])
    assert.equal(onChain.timeout, 900)

    // Fixed: the charge is for whole seconds run, and it must have run 2 of them.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const stopped = await json<{action: string; state: string}>(['job', 'stop', posted.job, '--credits'])
    assert.deepEqual([stopped.action, stopped.state], ['end', 'COMPLETED'])
    const ended = await json<{state: string; startedAt: string; endedAt: string; cost: Amount}>([
      'job',
      'get',
      posted.job,
    ])
    assert.equal(ended.state, 'COMPLETED')
    const ran = BigInt((Date.parse(ended.endedAt) - Date.parse(ended.startedAt)) / 1000)
    assert.ok(ran >= 2n && ran < 900n, `ran ${ran} s`)
    const after = await balance()
    assert.equal(after.reserved.baseUnits, '0')
    assert.equal(after.settled.baseUnits, String(price * ran), 'charged price x the seconds it ran')
    assert.equal(after.settled.baseUnits, ended.cost.baseUnits, 'as the market paid its node')
    assert.equal(after.available.baseUnits, String(2_000_000n - price * ran))

    // Stopping it again: it is over (exit 2), and nothing more is charged.
    await json(['job', 'stop', posted.job, '--credits'], 2)
    assert.equal((await balance()).settled.baseUnits, after.settled.baseUnits)
  })

  it('one Idempotency-Key lists one job, however often and however at once it is sent', async () => {
    const first = await json<{job: string; definition: string; market: string; credits: {project: string}}>([
      'job',
      'post',
      'job.json',
      '--credits',
      '--timeout',
      '60',
      '--idempotency-key',
      'ci-run-1',
    ])
    const project = first.credits.project
    const listed = await jobsOf(project)
    assert.ok(listed.includes(first.job))

    // The CLI run again with the same key and definition: the same job, nothing listed.
    const again = await json<{job: string}>([
      'job',
      'post',
      'job.json',
      '--credits',
      '--timeout',
      '60',
      '--idempotency-key',
      'ci-run-1',
    ])
    assert.equal(again.job, first.job)
    // The same key with another request: refused (exit 2), nothing listed.
    const other = await json<{error: {code: string}}>(
      ['job', 'post', 'job.json', '--credits', '--timeout', '61', '--idempotency-key', 'ci-run-1'],
      2,
    )
    assert.equal(other.error.code, 'idempotency_key_reused')

    // The route itself: two requests at once with one key, then a third in sequence.
    const body = {ipfsHash: first.definition, market: first.market, timeout: 60}
    const headers = {'idempotency-key': 'raw-1'}
    const [a, b] = await Promise.all([api('/api/jobs/list', body, headers), api('/api/jobs/list', body, headers)])
    const answers = [a, b].map((r) => r.status).sort()
    assert.ok(answers.join() === '200,200' || answers.join() === '200,409', `two at once answered ${answers.join()}`)
    const made = ((await (a.status === 200 ? a : b).json()) as {job: string}).job
    const c = await api('/api/jobs/list', body, headers)
    assert.equal(c.status, 200)
    assert.equal(c.headers.get('idempotent-replayed'), 'true')
    assert.equal(((await c.json()) as {job: string}).job, made)
    const d = await api('/api/jobs/list', {...body, timeout: 61}, headers)
    assert.equal(d.status, 422)

    const after = await jobsOf(project)
    assert.equal(after.length, listed.length + 1, 'one job for the key raw-1, none for the re-sent ones')
    assert.ok(after.includes(made))
  })

  it('refuses a post the credits cannot pay: exit 4, nothing listed; bodies and keys bounded', async () => {
    const project = (
      await json<{credits: {project: string}}>(['job', 'post', 'job.json', '--credits', '--timeout', '5'])
    ).credits.project
    const listed = await jobsOf(project)
    const short = await json<{error: {code: string}}>(
      ['job', 'post', 'job.json', '--credits', '--timeout', '2592000'],
      4,
    )
    assert.equal(short.error.code, 'insufficient_credits')
    assert.equal((await jobsOf(project)).length, listed.length)

    const tooBig = await api('/api/jobs/list', {ipfsHash: 'x'.repeat(10_000), market: 'm'})
    assert.equal(tooBig.status, 413)
    const badKey = await api('/api/jobs/list', {}, {'idempotency-key': 'k'.repeat(201)})
    assert.equal(badKey.status, 400)
    const wallet = await fetch(`${manager}/api/credits/balance`)
    assert.equal(wallet.status, 401)
  })
  it('a localnet stopped in the middle of a credit request: on its next start the key is answered from the chain, or freed', async () => {
    await json(['localnet', 'fund', '--credits', '1'])
    const posted = await json<{definition: string; market: string}>([
      'job',
      'post',
      'job.json',
      '--credits',
      '--timeout',
      '60',
    ])
    const body = {ipfsHash: posted.definition, market: posted.market, timeout: 60}
    const landed = await api('/api/jobs/list', body, {'idempotency-key': 'crash-landed'})
    assert.equal(landed.status, 200)
    const answer = (await landed.json()) as {tx: string; job: string; credits: {project: string}}
    const project = answer.credits.project
    const owner = (await json<{address: string}>(['wallet', 'address'])).address
    assert.equal((await cli(['localnet', 'stop'])).code, 0)

    // As a localnet that stopped mid-request leaves its ledger: the landed listing sent but not answered, and
    // another whose hold was taken and bytes signed but never sent (their blockhash long expired).
    const dead = spawnSync('true').pid!
    const never = {job: Keypair.generate().publicKey.toBase58(), tx: bs58.encode(randomBytes(64)), units: 777}
    const ledger = openSqlite(join(box.dataDir, 'credits', 'credits.db'))
    try {
      const intent = (job: string, tx: string, units: number, lastValidBlockHeight: number, answered: unknown) =>
        JSON.stringify({kind: 'list', job, tx, lastValidBlockHeight, units, status: 200, answer: answered})
      const changed = ledger
        .prepare(
          `UPDATE credit_requests SET status = NULL, answer = NULL, holder_pid = ?, holder_start = 1, intent = ?
           WHERE owner = ? AND key = 'crash-landed'`,
        )
        .run(dead, intent(answer.job, answer.tx, 1, 1e12, answer), owner)
      assert.equal(changed.changes, 1)
      ledger
        .prepare(
          `INSERT INTO credit_requests (owner, key, request, created_at, holder_pid, holder_start, intent)
           VALUES (?, 'crash-unsent', 'digest', 1, ?, 1, ?)`,
        )
        .run(owner, dead, intent(never.job, never.tx, never.units, 0, {job: never.job}))
      ledger
        .prepare(`INSERT INTO credit_jobs (job, owner, market, price, reserved, created_at) VALUES (?, ?, ?, 1, ?, 1)`)
        .run(never.job, owner, posted.market, never.units)
    } finally {
      ledger.close()
    }
    await balanceWhenUp()
    const listed = await jobsOf(project)

    // The landed one: its first answer, the same job, nothing listed again (before the fix: 409 for ever).
    const again = await api('/api/jobs/list', body, {'idempotency-key': 'crash-landed'})
    assert.equal(again.status, 200, await again.clone().text())
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.equal(((await again.json()) as {job: string}).job, answer.job)
    // The unsent one: its hold given back, its key free, so the request acts once now.
    const reader = openSqlite(join(box.dataDir, 'credits', 'credits.db'), {readonly: true})
    try {
      const hold = reader.prepare('SELECT reserved FROM credit_jobs WHERE job = ?').get(never.job)
      assert.equal(hold, undefined, 'the hold of the listing that never landed given back')
    } finally {
      reader.close()
    }
    const fresh = await api('/api/jobs/list', body, {'idempotency-key': 'crash-unsent'})
    assert.equal(fresh.status, 200, await fresh.clone().text())
    assert.equal(fresh.headers.get('idempotent-replayed'), null)
    const made = ((await fresh.json()) as {job: string}).job
    const after = await jobsOf(project)
    assert.equal(after.length, listed.length + 1, 'one new job, for the freed key only')
    assert.ok(after.includes(made) && !after.includes(never.job))
  })
})
