/**
 * The deployment manager with the localnet's own node running the jobs (as host processes): the node follows the
 * job account, so a SIMPLE-EXTEND job runs on past the timeout it was listed with only because the manager
 * extended it in time; a stop ends it.
 */
import {strict as assert} from 'node:assert'
import {existsSync} from 'node:fs'

import {PublicKey} from '@solana/web3.js'

import {decodeJobAccount, JobState} from '../../../src/lib/market/index.js'
import {api, createDeployment, deploymentJobs, jobsPaidBy, statusWhen, tasksWhen} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {useLocalnet} from '../../helpers/localnet.js'

describe('deployment manager with the localnet node (host processes)', function () {
  this.timeout(120_000)
  const t = useLocalnet({node: {gatewayPort: 0, podman: '/nonexistent/podman', hostProcesses: true}})
  before(function () {
    if (!existsSync('/bin/busybox')) this.skip()
  })

  it('SIMPLE-EXTEND: the node keeps running the job past its listed timeout because it was extended; stop ends it', async () => {
    const url = t.ln.runtime.deploymentManager!
    const owner = t.wallet
    const definition = {
      version: '0.1',
      type: 'container',
      ops: [{id: 'svc', type: 'container/run', args: {image: 'unused', cmd: 'sleep 3600'}}],
    }
    // Jobs of 15 s on chain, extended by 15 s 1.5 s before their end.
    const d = await createDeployment(url, owner, {job_definition: definition, timeout: 10, time_scale: 40})
    const vault = new PublicKey(d.vault)
    t.ln.node.fund(vault, {lamports: 100_000_000n, tokens: 50_000n})
    assert.equal((await api(url, owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)

    const job = await eventually('the job running on the node', 30_000, async () => {
      const jobs = await deploymentJobs(url, owner, d.id)
      return jobs[0]?.state === 'RUNNING' ? jobs[0] : undefined
    })
    // Past the end it was listed with (start + 15 s), the node still runs it: the extension moved its end.
    const pastFirstEnd = (job.time_start + 18) * 1000 - Date.now()
    if (pastFirstEnd > 0) await new Promise((resolve) => setTimeout(resolve, pastFirstEnd))
    const account = decodeJobAccount(t.ln.node.chain.account(new PublicKey(job.job))!.data)
    assert.equal(account.state, JobState.QUEUED, 'still running on chain (queued with a run)')
    assert.ok(account.timeout >= 30n, `timeout ${account.timeout}`)
    const status = t.ln.runtime.node
    assert.ok(status && 'runningJobs' in status && status.runningJobs.includes(job.job), JSON.stringify(status))
    await tasksWhen(url, owner, d.id, (tasks) => tasks.some((x) => x.task === 'EXTEND' && x.status === 'DONE' && x.tx))

    assert.equal((await api(url, owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
    await statusWhen(url, owner, d.id, 'STOPPED')
    const ended = (await jobsPaidBy(t, vault)).get(job.job)!
    assert.equal(ended.state, JobState.DONE)
    const extensions = (await tasksWhen(url, owner, d.id, () => true)).filter(
      (x) => x.task === 'EXTEND' && x.status === 'DONE' && x.tx,
    )
    assert.equal(ended.timeout, 15n * BigInt(1 + extensions.length))
    await eventually('the node to let the job go', 15_000, async () => {
      const node = t.ln.runtime.node
      return node && 'runningJobs' in node && !node.runningJobs.includes(job.job) ? true : undefined
    })
  })
})
