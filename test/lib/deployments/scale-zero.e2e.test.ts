/**
 * A scale to 0 and back on a real localnet, over raw HTTP (the registry's @nosana/api 2.1.8 refuses a count of 0
 * before sending): at 0 the deployment stays RUNNING with no job, and nothing is listed, extended or spent; a count
 * above 0 lists again. Bad counts are 400 with nothing changed.
 */
import {strict as assert} from 'node:assert'
import {setTimeout as sleep} from 'node:timers/promises'

import {PublicKey} from '@solana/web3.js'

import {JobState} from '../../../src/lib/market/codec/accounts.js'
import {
  api,
  createDeployment,
  deploymentJobs,
  deploymentTasks,
  holdings,
  jobsPaidBy,
  nodeTakesNextJob,
  statusWhen,
  tasksWhen,
} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {useLocalnet} from '../../helpers/localnet.js'

describe('deployment scale to 0 and back on the localnet (raw HTTP)', function () {
  this.timeout(120_000)
  const t = useLocalnet()
  const url = () => t.ln.runtime.deploymentManager as string

  it('SIMPLE-EXTEND, 2 replicas: 0 stops both and leaves it RUNNING with nothing listed, extended or spent; 2 lists again', async () => {
    const owner = t.wallet
    // 10 minutes at time_scale 40: jobs of 15 s, each extended 1.5 s before its end while it runs.
    const d = await createDeployment(url(), owner, {replicas: 2, timeout: 10, time_scale: 40})
    const vault = new PublicKey(d.vault)
    t.ln.node.fund(vault, {lamports: 200_000_000n, tokens: 1_000_000n})
    assert.equal((await api(url(), owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
    await tasksWhen(
      url(),
      owner,
      d.id,
      (tasks) => tasks.filter((x) => x.task === 'LIST' && x.status === 'DONE').length >= 1,
    )
    await eventually('two jobs listed', 30_000, async () =>
      (await deploymentJobs(url(), owner, d.id)).length === 2 ? true : undefined,
    )
    await nodeTakesNextJob(t)
    await nodeTakesNextJob(t)
    await eventually('both running', 30_000, async () => {
      const jobs = await deploymentJobs(url(), owner, d.id)
      return jobs.every((j) => j.state === 'RUNNING') ? true : undefined
    })

    // Bad counts: 400 naming the rule, the count unchanged.
    const scale = (replicas: unknown) =>
      api(url(), owner, 'PATCH', `/api/deployments/${d.id}/update-replica-count`, {replicas})
    for (const bad of [-1, 101, 1.5, '2', null]) {
      const refused = await scale(bad)
      assert.equal(refused.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(refused.body)}`)
      assert.equal(refused.body.error.code, 'invalid_replicas')
      assert.match(refused.body.error.message, /from 0 to 100/)
    }
    assert.equal((await api(url(), owner, 'GET', `/api/deployments/${d.id}`)).body.replicas, 2)

    const openTasks = async () =>
      (await deploymentTasks(url(), owner, d.id)).filter((x) => x.status === 'PENDING' || x.status === 'PROCESSING')
    // 0: both jobs stopped on chain, the deployment RUNNING with nothing open.
    const zero = await scale(0)
    assert.equal(zero.status, 200, JSON.stringify(zero.body))
    assert.equal(zero.body.replicas, 0)
    const listedBefore = [...(await jobsPaidBy(t, vault)).keys()].sort()
    assert.equal(listedBefore.length, 2)
    await eventually('both jobs ended on chain', 30_000, async () => {
      const accounts = [...(await jobsPaidBy(t, vault)).values()]
      return accounts.every((a) => a.state !== JobState.QUEUED) && (await openTasks()).length === 0 ? true : undefined
    })
    const spentAtZero = await holdings(t, vault)
    const tasksAtZero = (await deploymentTasks(url(), owner, d.id)).length
    // Many of the worker's polls (125 ms each at time_scale 40) and past both jobs' old ends: nothing happens.
    await sleep(4000)
    const idle = await api(url(), owner, 'GET', `/api/deployments/${d.id}`)
    assert.equal(idle.body.status, 'RUNNING')
    assert.equal(idle.body.replicas, 0)
    assert.equal(idle.body.active_jobs, 0)
    assert.deepEqual([...(await jobsPaidBy(t, vault)).keys()].sort(), listedBefore, 'nothing listed at 0')
    assert.equal((await deploymentTasks(url(), owner, d.id)).length, tasksAtZero, 'no task at 0 (no LIST, no EXTEND)')
    assert.deepEqual(await holdings(t, vault), spentAtZero, 'nothing spent at 0')

    // Back to 2: two new jobs listed, still RUNNING.
    const back = await scale(2)
    assert.equal(back.status, 200, JSON.stringify(back.body))
    await eventually('two more jobs listed', 30_000, async () =>
      (await jobsPaidBy(t, vault)).size === 4 ? true : undefined,
    )
    await statusWhen(url(), owner, d.id, 'RUNNING')
    const jobs = await deploymentJobs(url(), owner, d.id)
    assert.equal(jobs.length, 4)
    assert.equal(jobs.filter((j) => j.state === 'QUEUED').length, 2)

    assert.equal((await api(url(), owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
    await statusWhen(url(), owner, d.id, 'STOPPED')
  })
})
