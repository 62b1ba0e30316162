import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {existsSync} from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import type {PublicKey} from '@solana/web3.js'

import {localnetRewardsAccounts} from '../../../src/lib/localnet/rewards.js'
import {marketNetwork} from '../../../src/lib/market/connect.js'
import {decodeJobAccount, decodeRunAccount} from '../../../src/lib/market/index.js'
import {extendJob, quoteExtend, readOwnJob, stopJob} from '../../../src/lib/market/jobs/manage.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'

import {HOST_PROCESS_NOTICE} from '../../../src/lib/node/runtime/host-process.js'
import {startTestLocalnet, type TestLocalnet, useLocalnet} from '../../helpers/localnet.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {post, result, runOf, viaGateway, waitFor, watchFinished} from '../../helpers/node.js'
import {freePort} from '../../helpers/ports.js'

const NO_PODMAN = '/nonexistent/podman'

/** The test wallet's payment tokens, in base units. */
async function tokens(t: TestLocalnet): Promise<bigint> {
  const account = getAssociatedTokenAddressSync(t.mint, t.wallet.publicKey, true)
  return BigInt((await t.connection.getTokenAccountBalance(account)).value.amount)
}

describe('localnet node without podman', function () {
  this.timeout(30_000)
  const t = useLocalnet({node: {gatewayPort: 0, podman: NO_PODMAN}})

  it('is off, saying why, unless host processes are turned on', () => {
    assert.equal(t.ln.runtime.gatewayUrl, null)
    const node = t.ln.runtime.node
    assert.ok(node && 'off' in node, JSON.stringify(node))
    assert.match(node.off, /podman is not installed.*--host-processes/)
  })
})

describe('localnet node with host processes (opt-in)', function () {
  this.timeout(60_000)
  const t = useLocalnet({node: {gatewayPort: 0, podman: NO_PODMAN, hostProcesses: true, healthIntervalMs: 100}})
  before(function () {
    if (!existsSync('/bin/busybox')) this.skip()
  })

  it('runs the job on the host, and every result says so', async () => {
    const job = await post(t, [{id: 'hi', type: 'container/run', args: {image: 'unused', cmd: 'echo on-host'}}])
    await waitFor(t, job, 'COMPLETED')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success')
    assert.equal(doc.isolated, false)
    assert.ok(doc.notices.includes(HOST_PROCESS_NOTICE))
    assert.equal(doc.ops[0]!.stdout, 'on-host\n')
  })

  describe('follows the job account: its timeout, an extension, an end', () => {
    /** A service on the host: busybox's httpd on a free port, exposed. */
    const web = async () => {
      const port = await freePort()
      const cmd = `echo served > index.html && exec /bin/busybox httpd -f -p 127.0.0.1:${port} -h .`
      return [{id: 'web', type: 'container/run', args: {image: 'unused', cmd, expose: port}}]
    }
    /** The market client's `extend` and `end`, as `job extend` and `job stop` send them, signed by the poster. */
    const client = () => {
      const net = marketNetwork(
        resolveSettings({network: 'localnet', env: {XDG_CONFIG_HOME: '/nonexistent-gpunet-config'}}),
        {
          rpcUrl: t.ln.runtime.rpcUrl,
          contentStoreUrl: t.ln.runtime.contentStoreUrl,
          gatewayUrl: t.ln.runtime.gatewayUrl,
          programId: t.programId,
          mint: t.mint,
          market: t.market,
          node: null,
          rewards: localnetRewardsAccounts(t.mint),
        },
      )
      const wallet = walletFromBytes(t.wallet.secretKey)
      return {
        extend: async (job: PublicKey, timeout: bigint) =>
          extendJob(net, await quoteExtend(net, wallet, await readOwnJob(net, wallet, job), timeout)),
        stop: async (job: PublicKey) => stopJob(net, wallet, await readOwnJob(net, wallet, job)),
      }
    }
    /** The job's settled account: how long the chain says it ran (its end minus its run's start), in seconds. */
    const ranFor = (job: PublicKey) => {
      const account = decodeJobAccount(t.ln.node.chain.account(job)!.data)
      return Number(account.timeEnd - account.timeStart)
    }
    /** The run's start in chain seconds: the job ends at this plus its timeout. */
    const runStart = (job: PublicKey) => {
      const run = runOf(t, job)!
      return decodeRunAccount(t.ln.node.chain.account(run.address)!.data).time
    }
    const served = async (job: PublicKey) => {
      const deadline = Date.now() + 10_000
      let answer = await viaGateway(t, job)
      while (answer.status !== 200 && Date.now() < deadline) {
        await sleep(50)
        answer = await viaGateway(t, job)
      }
      return answer
    }

    it('serves the job until its own timeout (no fixed lifetime), then ends it and records the result', async () => {
      const finished = watchFinished(t)
      const job = await post(t, await web(), 3n)
      await waitFor(t, job, 'RUNNING')
      assert.deepEqual(await served(job), {status: 200, body: 'served\n'})
      const doc = await finished(job)
      await waitFor(t, job, 'COMPLETED')
      const ran = ranFor(job)
      assert.ok(ran >= 3 && ran <= 5, `ran ${ran} s for a 3 s timeout`)
      // As the network's nodes record a job their expiry stopped: success, the operation success with jobExpired.
      assert.deepEqual([doc.status, doc.error], ['success', undefined])
      assert.equal(doc.raw.opStates[0]!.status, 'success')
      assert.equal(doc.raw.opStates[0]!.diagnostics.reason.jobExpired, true)
      assert.equal((await viaGateway(t, job)).status, 404)
      const onChain = (await result(t, job)).doc
      assert.deepEqual(
        [onChain.status, onChain.raw.opStates[0]!.diagnostics.reason.jobExpired],
        ['success', true],
        'the result is recorded on chain',
      )
    })

    it('an extension moves the end: the service runs past its first end and ends at the new one', async () => {
      const finished = watchFinished(t)
      const job = await post(t, await web(), 4n)
      await waitFor(t, job, 'RUNNING')
      const firstEndMs = Number(runStart(job) + 4n) * 1000
      await client().extend(job, 9n)
      assert.equal(decodeJobAccount(t.ln.node.chain.account(job)!.data).timeout, 9n)
      assert.ok(Date.now() < firstEndMs, 'extended before its first end')
      await sleep(firstEndMs + 1500 - Date.now())
      assert.deepEqual(await served(job), {status: 200, body: 'served\n'}, 'still served past its first end')
      assert.deepEqual(t.ln.agent!.agent.runningJobs, [job.toBase58()])
      const doc = await finished(job)
      await waitFor(t, job, 'COMPLETED')
      const ran = ranFor(job)
      assert.ok(ran >= 9 && ran <= 11, `ran ${ran} s for a timeout extended from 4 s to 9 s`)
      assert.deepEqual([doc.status, doc.raw.opStates[0]!.diagnostics.reason.jobExpired], ['success', true])
      assert.equal((await viaGateway(t, job)).status, 404)
    })

    it('an end (job stop) stops the job now: the service goes down and the output is recorded with complete', async () => {
      const finished = watchFinished(t)
      const job = await post(t, await web(), 600n)
      await waitFor(t, job, 'RUNNING')
      assert.deepEqual(await served(job), {status: 200, body: 'served\n'})
      const released = once(t.ln.agent!.agent, 'released')
      const {action} = await client().stop(job)
      assert.equal(action, 'end')
      assert.deepEqual(await released, [job.toBase58()])
      assert.deepEqual(t.ln.agent!.agent.runningJobs, [])
      assert.equal((await viaGateway(t, job)).status, 404)
      const doc = await finished(job)
      assert.equal(doc.status, 'stopped')
      assert.equal(doc.ops[0]!.stopped, true)
      assert.ok(ranFor(job) <= 5, `ran ${ranFor(job)} s of 600`)
      assert.equal((await result(t, job)).doc.status, 'stopped', 'recorded with complete')
    })
  })
})

describe('localnet node across a restart', function () {
  this.timeout(30_000)
  const node = {gatewayPort: 0, podman: NO_PODMAN, hostProcesses: true}
  const dataDir = tempDir()
  after(() => removeDir(dataDir))

  it('fails the job it was running when the localnet stopped, refunding the unused time', async function () {
    if (!existsSync('/bin/busybox')) this.skip()
    const first = await startTestLocalnet({dataDir, node})
    const job = await post(first, [{id: 'long', type: 'container/run', args: {image: 'unused', cmd: 'sleep 30'}}])
    await waitFor(first, job, 'RUNNING')
    const deposited = await tokens(first)
    await first.close()

    const second = await startTestLocalnet({dataDir, node, wallet: first.wallet})
    try {
      assert.deepEqual(await waitFor(second, job, 'COMPLETED'), ['COMPLETED'])
      const {doc} = await result(second, job)
      assert.equal(doc.status, 'failed')
      assert.equal(doc.error?.code, 'interrupted')
      assert.deepEqual(doc.ops, [])
      assert.ok((await tokens(second)) > deposited, 'the unused deposit came back')
    } finally {
      await second.close()
    }
  })
})
