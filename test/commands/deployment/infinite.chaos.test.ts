/**
 * INFINITE end to end on a localnet of 4 nodes running jobs in podman (each job's exposed port published on a port
 * of its own, so replicas run side by side), through the built CLI and the deployment's stable URL on the gateway:
 * rotations keep the URL answering and end each old job early (paid on chain only for the time it ran); a replica
 * whose process is killed is replaced; a crash loop is throttled and then stopped by the fail-safe, its spending
 * bounded by the rule. A client loops on the stable URL through each test and counts the answers that are not the
 * service's.
 */
import {strict as assert} from 'node:assert'
import {execFileSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {Connection, type Keypair, PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import {readKeypair} from '../../../src/lib/keys/wallet.js'
import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {decodeJobAccount, JOB_ACCOUNT_DISCRIMINATOR, type JobAccount} from '../../../src/lib/market/index.js'
import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {deploymentEvents, deploymentJobs, type EventJson} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {okService, requirePodman, TEST_IMAGE} from '../../helpers/podman.js'
import {loopOnStableUrl, type StableUrlClient} from '../../helpers/stable-url-client.js'

describe('INFINITE deployments on a localnet of 4 nodes (end to end)', function () {
  this.timeout(180_000)
  requirePodman()
  let box: CliSandbox
  let status: LocalnetStatus
  let owner: Keypair
  let connection: Connection
  let client: StableUrlClient | null = null

  const cli = async (args: string[]) => {
    const result = await runCli([...args, '--json'], {env: box.env, cwd: box.dir})
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}${result.stdout}`)
    return JSON.parse(result.stdout) as {id: string; vault: string; status: string}
  }
  const manager = () => status.deploymentManager!
  const gatewayPort = () => Number(new URL(status.gatewayUrl!).port)
  const events = (id: string, type: string) =>
    deploymentEvents(manager(), owner, id).then((all) => all.filter((e) => e.type === type))
  const jobNamed = (event: EventJson) => /job (\w+)/.exec(event.message)![1]!

  /** Creates, funds and starts an INFINITE deployment of `file`. */
  const startInfinite = async (name: string, definition: unknown, args: string[]) => {
    writeFileSync(join(box.dir, `${name}.json`), JSON.stringify(definition))
    const created = await cli([
      'deployment',
      'create',
      '--file',
      `${name}.json`,
      '--strategy',
      'INFINITE',
      '--timeout',
      '60m',
      // A vault of its own: each test counts what its deployment spent from what its vault holds.
      '--vault',
      'new',
      ...args,
    ])
    await cli(['deployment', 'fund', created.id, '--sol', '0.2', '--tokens', '20'])
    await cli(['deployment', 'start', created.id])
    return created
  }

  /** Starts the client once the stable URL first answers (no replica was ready before). */
  const clientOn = async (id: string) => {
    const host = `${id.toLowerCase()}.deploy.localhost`
    const probe = loopOnStableUrl(gatewayPort(), host, 'ok', 100)
    await eventually('the stable URL answers', 90_000, async () => (probe.ok > 0 ? true : undefined), 200)
    await probe.stop()
    client = loopOnStableUrl(gatewayPort(), host, 'ok')
    return client
  }

  /** The job accounts the vault paid for, by address. */
  const vaultJobs = async (vault: PublicKey): Promise<Map<string, JobAccount>> => {
    const accounts = await connection.getProgramAccounts(new PublicKey(status.programId!), {
      filters: [{memcmp: {offset: 0, bytes: bs58.encode(JOB_ACCOUNT_DISCRIMINATOR)}}],
    })
    const jobs = new Map<string, JobAccount>()
    for (const {pubkey, account} of accounts) {
      const job = decodeJobAccount(account.data)
      if (job.payer.equals(vault)) jobs.set(pubkey.toBase58(), job)
    }
    return jobs
  }
  const vaultTokens = async (vault: PublicKey) => {
    const ata = getAssociatedTokenAddressSync(new PublicKey(status.mint!), vault, true)
    return BigInt((await connection.getTokenAccountBalance(ata, 'confirmed')).value.amount)
  }
  /** What each ended job was paid on chain: its price for the seconds it ran, at most its timeout. */
  const paidFor = (job: JobAccount) => {
    const ran = job.timeEnd - job.timeStart
    return job.price * (ran < job.timeout ? ran : job.timeout)
  }

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    const started = await runCli(['localnet', 'start', '--detach', '--nodes', '4', '--runtime', 'podman', '--json'], {
      env: box.env,
    })
    assert.equal(started.code, 0, started.stderr)
    status = JSON.parse(started.stdout) as LocalnetStatus
    assert.equal(status.nodes.length, 4)
    assert.ok(status.deploymentManager && status.gatewayUrl)
    owner = readKeypair(box.env.GPUNET_WALLET!)
    connection = new Connection(status.rpcUrl!, 'confirmed')
  })
  afterEach(async () => {
    await client?.stop()
    client = null
  })
  after(async () => {
    await box?.cleanup()
  })

  it('2 replicas of 40 s jobs keep the stable URL answering through two rotations each; old jobs end early, paid for their time', async () => {
    // timeout 60 min at time_scale 90: jobs of 40 s, a replacement listed 13.3 s before each one's end.
    const d = await startInfinite('rotating', okService('rotating'), ['--replicas', '2', '--time-scale', '90'])
    const loop = await clientOn(d.id)
    const rotated = await eventually(
      'four rotations (two per replica)',
      150_000,
      async () => {
        const seen = await events(d.id, 'JOB_ROTATED')
        return seen.length >= 4 ? seen : undefined
      },
      1000,
    )
    await loop.stop()
    assert.deepEqual(loop.failures, [], `${loop.failures.length} of ${loop.ok + loop.failures.length} requests failed`)
    assert.ok(loop.ok > 100, `only ${loop.ok} requests answered`)

    // Each rotated job was then stopped by the manager (its STOP confirmed with a transaction of the vault's).
    const rotatedJobs = rotated.map(jobNamed)
    await eventually(
      'every rotated job stopped by the manager',
      30_000,
      async () => {
        const confirmed = await events(d.id, 'JOB_STOPPED_CONFIRMED')
        const stopped = new Set(confirmed.filter((e) => e.message.endsWith(' stopped')).map(jobNamed))
        return rotatedJobs.every((job) => stopped.has(job)) ? true : undefined
      },
      500,
    )
    await cli(['deployment', 'stop', d.id, '--yes'])
    const vault = new PublicKey(d.vault)
    const onChain = await vaultJobs(vault)
    for (const event of rotated) {
      const job = onChain.get(jobNamed(event))!
      assert.ok(job, `job ${jobNamed(event)} on chain`)
      assert.ok(job.timeEnd > job.timeStart, 'it ran and ended')
      assert.ok(
        job.timeEnd - job.timeStart < job.timeout,
        `ended before its timeout: ${job.timeEnd - job.timeStart} of ${job.timeout} s`,
      )
    }
    // The vault paid each job its price for the seconds it ran, nothing more: 20 tokens in, the rest still there.
    const spent = [...onChain.values()].reduce((sum, job) => sum + paidFor(job), 0n)
    assert.equal(await vaultTokens(vault), 20_000_000n - spent)
  })

  it("a replica's process killed: an event says why, a new job replaces it, the stable URL never fails", async () => {
    const d = await startInfinite('healing', okService('healing'), ['--replicas', '2'])
    const loop = await clientOn(d.id)
    await eventually('both replicas serve', 60_000, async () => {
      const jobs = await deploymentJobs(manager(), owner, d.id)
      return jobs.filter((j) => j.state === 'RUNNING').length === 2 ? true : undefined
    })
    const pids = execFileSync('pgrep', ['-f', '^httpd -f -p 8080 -h /tmp/healing'], {encoding: 'utf8'})
      .trim()
      .split('\n')
    assert.equal(pids.length, 2, `the replicas' processes: ${pids.join(' ')}`)
    process.kill(Number(pids[0]), 'SIGKILL')
    const ended = await eventually(
      'the replica’s end said',
      60_000,
      async () => (await events(d.id, 'JOB_ENDED'))[0],
      500,
    )
    assert.match(ended.message, /completed after \d+ s, before its timeout: a replacement is listed/)
    const replacement = await eventually(
      'a new job serving in its place',
      90_000,
      async () => {
        const jobs = await deploymentJobs(manager(), owner, d.id)
        const running = jobs.filter((j) => j.state === 'RUNNING')
        return jobs.length === 3 && running.length === 2 && !running.some((j) => j.job === jobNamed(ended))
          ? jobs
          : undefined
      },
      1000,
    )
    assert.equal(replacement.length, 3)
    // It serves: the loop keeps answering for a while with the new replica in the round robin.
    const before = loop.ok
    await eventually('more answers', 10_000, async () => (loop.ok > before + 20 ? true : undefined), 200)
    await loop.stop()
    assert.deepEqual(loop.failures, [], `${loop.failures.length} of ${loop.ok + loop.failures.length} requests failed`)
    await cli(['deployment', 'stop', d.id, '--yes'])
  })

  it('a crash loop is throttled, then the fail-safe stops the deployment; what it spent stays within the rule', async () => {
    // The service exits at once. time_scale 120: the rapid threshold 2.5 s, the throttle 0.5 s doubling to 30 s.
    const crashing = {
      version: '0.1',
      type: 'container',
      ops: [{id: 'web', type: 'container/run', args: {image: TEST_IMAGE, cmd: ['sh', '-c', 'exit 1'], expose: 8080}}],
    }
    const d = await startInfinite('crashing', crashing, ['--replicas', '1', '--time-scale', '120'])
    const failSafe = await eventually(
      'the fail-safe',
      170_000,
      async () => (await events(d.id, 'RAPID_COMPLETION_FAIL_SAFE'))[0],
      1000,
    )
    assert.match(failSafe.message, /8 rounds in a row of jobs completing within 2.5 s of starting \(the last 3\)/)
    // The network's streak: rounds 1 to 7 throttle, the 8th stops the deployment instead.
    const throttled = await events(d.id, 'RAPID_COMPLETION_THROTTLE')
    assert.deepEqual(
      throttled.map((e) => /round (\d); the fail-safe stops the deployment at 8/.exec(e.message)![1]),
      ['1', '2', '3', '4', '5', '6', '7'],
    )
    const stopped = await eventually(
      'STOPPED',
      30_000,
      async () => {
        const {status: state} = await cli(['deployment', 'get', d.id])
        return state === 'STOPPED' ? state : undefined
      },
      500,
    )
    assert.equal(stopped, 'STOPPED')
    // The rule's bound: 3 jobs before the first round, then one a round up to the 7th, each paid for under the
    // rapid threshold.
    const vault = new PublicKey(d.vault)
    const onChain = await vaultJobs(vault)
    const listed = (await deploymentJobs(manager(), owner, d.id)).length
    assert.ok(listed <= 10, `${listed} jobs listed`)
    const spent = 20_000_000n - (await vaultTokens(vault))
    const price = [...onChain.values()][0]!.price
    assert.equal(
      spent,
      [...onChain.values()].reduce((sum, job) => sum + paidFor(job), 0n),
    )
    assert.ok(spent <= 10n * price * 3n, `spent ${spent}, bound ${10n * price * 3n}`)
  })
})
