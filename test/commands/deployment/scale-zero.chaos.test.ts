/**
 * A scale to 0 and back across kill -9 of `gpunet deployment serve` (a real process on a real localnet, its data
 * directory kept): killed while the scale to 0 stops the jobs, then killed by its crash point after the listing of
 * the scale back up landed and before it was recorded. Restarted each time on the same data directory: no job is
 * listed twice, every job on chain of the deployment is recorded, and each is either stopped or one of the replicas
 * wanted; nothing is listed while at 0.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {PublicKey} from '@solana/web3.js'

import {CRASH_ENV, type CrashPoint} from '../../../src/lib/deployments/crash-points.js'
import {JobState} from '../../../src/lib/market/codec/accounts.js'
import {
  api,
  createDeployment,
  deploymentEvents,
  deploymentJobs,
  deploymentTasks,
  jobsPaidBy,
  nodeTakesNextJob,
  serving,
  spawnServe,
  type ServeProcess,
  statusWhen,
} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {useLocalnet} from '../../helpers/localnet.js'

describe('deployment serve: kill -9 during a scale to 0 and back', function () {
  this.timeout(240_000)
  const t = useLocalnet()
  const running: ServeProcess[] = []
  let dir: string

  before(() => {
    dir = tempDir('gpunet-scale-chaos-')
  })
  after(async () => {
    for (const m of running) if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL')
    removeDir(dir)
  })

  /** Starts `gpunet deployment serve` on the test's localnet and `dataDir`; answers once it listens. */
  async function serve(dataDir: string, crashAt?: CrashPoint): Promise<ServeProcess> {
    const manager = await serving(spawnServe(t, dir, dataDir, crashAt))
    running.push(manager)
    return manager
  }

  async function kill9(manager: ServeProcess): Promise<void> {
    if (manager.child.exitCode === null && manager.child.signalCode === null) {
      manager.child.kill('SIGKILL')
      await once(manager.child, 'exit')
    }
    assert.equal(manager.child.signalCode, 'SIGKILL', manager.stderr())
  }

  it('no job listed twice, every job on chain recorded and either stopped or wanted, nothing listed at 0', async () => {
    const owner = t.wallet
    const dataDir = join(dir, 'manager')
    const first = await serve(dataDir)
    // SIMPLE-EXTEND at time_scale 40: jobs of 15 s, extended 1.5 s before their end.
    const d = await createDeployment(first.url, owner, {replicas: 2, timeout: 10, time_scale: 40})
    const vault = new PublicKey(d.vault)
    t.ln.node.fund(vault, {lamports: 200_000_000n, tokens: 1_000_000n})
    assert.equal((await api(first.url, owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
    await eventually('two jobs listed', 30_000, async () =>
      (await jobsPaidBy(t, vault)).size === 2 ? true : undefined,
    )
    await nodeTakesNextJob(t)
    await nodeTakesNextJob(t)
    await eventually('both running', 30_000, async () => {
      const jobs = await deploymentJobs(first.url, owner, d.id)
      return jobs.length === 2 && jobs.every((j) => j.state === 'RUNNING') ? true : undefined
    })
    const scale = (url: string, replicas: number) =>
      api(url, owner, 'PATCH', `/api/deployments/${d.id}/update-replica-count`, {replicas})

    // Scaled to 0, then killed while its stops are under way (a pass or two in: 125 ms each).
    assert.equal((await scale(first.url, 0)).status, 200)
    await sleep(300)
    await kill9(first)

    // Restarted (and armed to die after the next listing lands): the stops settle, nothing is listed at 0.
    const second = await serve(dataDir, 'list-sent')
    await eventually('both jobs ended, nothing open', 60_000, async () => {
      const accounts = [...(await jobsPaidBy(t, vault)).values()]
      const open = (await deploymentTasks(second.url, owner, d.id)).filter((x) => x.status !== 'DONE')
      // The manager's record too: a restarted manager may still wait out the killed one's lease before it reads
      // the chain's ends into its rows.
      const seen = await api(second.url, owner, 'GET', `/api/deployments/${d.id}`)
      return accounts.every((a) => a.state !== JobState.QUEUED && a.timeEnd > 0n) &&
        open.length === 0 &&
        seen.body.active_jobs === 0
        ? true
        : undefined
    }).catch((error: Error) => {
      throw new Error(`${error.message}; the manager said: ${second.stderr()}`)
    })
    await sleep(2000)
    assert.equal((await jobsPaidBy(t, vault)).size, 2, 'nothing listed at 0')
    const idle = await api(second.url, owner, 'GET', `/api/deployments/${d.id}`)
    assert.equal(idle.body.status, 'RUNNING')
    assert.equal(idle.body.active_jobs, 0)

    // Back to 2: killed by its crash point after the first listing landed, before it was recorded.
    assert.equal((await scale(second.url, 2)).status, 200)
    if (second.child.exitCode === null && second.child.signalCode === null) await once(second.child, 'exit')
    assert.equal(second.child.signalCode, 'SIGKILL', second.stderr())
    assert.match(second.stderr(), new RegExp(`${CRASH_ENV}=list-sent: killing`))
    assert.equal((await jobsPaidBy(t, vault)).size, 3, 'the listing landed')

    // Restarted: the landed listing is recorded from what was saved, the second replica listed, none twice.
    const third = await serve(dataDir)
    await eventually('four jobs on chain, all recorded', 60_000, async () => {
      const rows = await deploymentJobs(third.url, owner, d.id)
      return (await jobsPaidBy(t, vault)).size === 4 && rows.length === 4 ? true : undefined
    }).catch((error: Error) => {
      throw new Error(`${error.message}; the manager said: ${third.stderr()}`)
    })
    await sleep(2000)
    const onChain = await jobsPaidBy(t, vault)
    const rows = await deploymentJobs(third.url, owner, d.id)
    assert.equal(onChain.size, 4, 'no job listed twice')
    assert.deepEqual(rows.map((r) => r.job).sort(), [...onChain.keys()].sort(), 'every job on chain is recorded')
    const listed = (await deploymentEvents(third.url, owner, d.id)).filter((e) => e.type === 'JOB_LIST_CONFIRMED')
    assert.equal(listed.length, 4)
    // The two of before the scale to 0 ended; the two of after it are the replicas wanted, queued.
    const live = [...onChain.values()].filter((a) => a.state === JobState.QUEUED && a.timeEnd === 0n)
    assert.equal(live.length, 2)
    assert.equal((await api(third.url, owner, 'GET', `/api/deployments/${d.id}`)).body.status, 'RUNNING')

    // Stopped: every job on chain ends, every task settled.
    assert.equal((await api(third.url, owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
    await statusWhen(third.url, owner, d.id, 'STOPPED', 60_000)
    // The queued two delisted (their accounts closed), the two that ran ended: none runs on unpaid for.
    for (const account of (await jobsPaidBy(t, vault)).values()) assert.ok(account.timeEnd > 0n, 'ended and paid')
    assert.ok((await deploymentTasks(third.url, owner, d.id)).every((x) => x.status === 'DONE'))
    third.child.kill('SIGTERM')
    await once(third.child, 'exit')
  })
})
