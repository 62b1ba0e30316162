/**
 * A deployment's stable URL on the localnet, end to end: two nodes (podman), a deployment of two replicas of an
 * HTTP service that answers with its job's address, the gateway spreading requests over both, a drained replica
 * getting none, the deployment object's endpoints, and a 503 once no replica is left.
 */
import {strict as assert} from 'node:assert'
import {existsSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {PublicKey} from '@solana/web3.js'

import {deploymentLines} from '../../../src/lib/deployments/client/client-render.js'
import type {Deployment} from '../../../src/lib/deployments/client/client.js'
import {drainJob} from '../../../src/lib/deployments/draining.js'
import {api, createDeployment, deploymentJobs, statusWhen} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {gatewayGet} from '../../helpers/node.js'
import {ECHO_JOB, requirePodman} from '../../helpers/podman.js'
import {freePort} from '../../helpers/ports.js'

describe('deployment stable URL on the localnet (podman, 2 nodes)', function () {
  this.timeout(180_000)
  requirePodman()
  const t = useLocalnet({node: {gatewayPort: 0, pull: 'never', healthIntervalMs: 200, gpus: 0, nodes: 2}})

  it('spreads requests over both replicas, sends none to a drained one, lists its endpoints, and answers 503 once stopped', async () => {
    const url = t.ln.runtime.deploymentManager!
    const owner = t.wallet
    const d = await createDeployment(url, owner, {job_definition: ECHO_JOB, replicas: 2, strategy: 'SIMPLE'})
    t.ln.node.fund(new PublicKey(d.vault), {lamports: 100_000_000n, tokens: 1_000_000n})
    assert.equal((await api(url, owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
    const stable = t.ln.agent!.gateway.deploymentUrl(d.id)

    const jobs = await eventually('both replicas running', 60_000, async () => {
      const rows = await deploymentJobs(url, owner, d.id)
      return rows.length === 2 && rows.every((r) => r.state === 'RUNNING') ? rows.map((r) => r.job) : undefined
    })
    const answers = await eventually('both replicas answering at the stable URL', 60_000, async () => {
      const seen: string[] = []
      for (let i = 0; i < 8; i++) seen.push((await gatewayGet(stable)).body)
      return new Set(seen).size === 2 ? seen : undefined
    })
    assert.deepEqual(new Set(answers), new Set(jobs))
    // Both ready: round robin gives each replica half.
    const spread: string[] = []
    for (let i = 0; i < 8; i++) spread.push((await gatewayGet(stable)).body)
    assert.deepEqual(
      jobs.map((job) => spread.filter((a) => a === job).length),
      [4, 4],
    )

    const object = (await api(url, owner, 'GET', `/api/deployments/${d.id}`)).body as unknown as Deployment
    const endpoints = object.endpoints as {
      opId: string
      url: string
      port: number
      kind: string
      online?: boolean
      job?: string
    }[]
    // The network's deployment URL first (the gateway serves it too), then gpunet's stable URL, then each replica.
    assert.deepEqual(
      endpoints.map((e) => e.kind),
      ['deployment', 'stable', 'replica', 'replica'],
    )
    const sdk = await import('@nosana/sdk')
    const label = sdk.getExposeIdHash(sdk.createHash(`${d.id}:${d.vault}`, 45), 'web', 0)
    assert.deepEqual(endpoints[0], {
      opId: 'web',
      port: 8080,
      url: stable.replace(/^http:\/\/[^.]+\.deploy\./, `http://${label}.node.`),
      kind: 'deployment',
      online: true,
    })
    assert.deepEqual(endpoints[1], {opId: 'web', port: 8080, url: stable, kind: 'stable', online: true})
    const replicas = endpoints.slice(2)
    assert.deepEqual(new Set(replicas.map((e) => e.job)), new Set(jobs), 'each replica, at its own URL')
    for (const e of replicas) {
      assert.equal(e.url, t.ln.agent!.gateway.jobUrl(e.job!))
      assert.equal(e.online, true)
    }
    const lines = deploymentLines(object).join('\n')
    assert.match(lines, new RegExp(`stable {6}${stable.replace(/[.]/g, '\\.')} \\(web:8080, online\\)`))

    // Drained (as a rotation does before ending it): every request goes to the other replica.
    const [drained, kept] = jobs as [string, string]
    await drainJob(t.ln.manager!.context, drained)
    for (let i = 0; i < 6; i++) assert.equal((await gatewayGet(stable)).body, kept)

    // Whatever the manager drains from here on, seen as it goes by (each drain still runs as it does).
    const draining = t.ln.manager!.context.draining!
    const drainedJobs: string[] = []
    const drain = draining.drain.bind(draining)
    draining.drain = (job, maxMs) => (drainedJobs.push(job), drain(job, maxMs))
    assert.equal((await api(url, owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
    await statusWhen(url, owner, d.id, 'STOPPED', 60_000)
    // The STOP task drained the replica it ended, as the one a rotation retires is.
    assert.ok(drainedJobs.includes(kept), `drained: ${drainedJobs.join(', ')}`)
    // Once their rows are seen ended, their flags go: the set holds running jobs only.
    await eventually('the draining flags forgotten', 30_000, async () =>
      jobs.every((job) => !draining.isDraining(job)) ? true : undefined,
    )
    const gone = await eventually('503 at the stable URL', 30_000, async () => {
      const answer = await gatewayGet(stable)
      return answer.status === 503 ? answer : undefined
    })
    assert.match(JSON.parse(gone.body).message, /No replica of deployment \S+ is ready to serve/)
  })
})

describe("deployment stable URL on the localnet: the node's continuous health checks decide (host processes)", function () {
  this.timeout(120_000)
  const t = useLocalnet({
    node: {
      gatewayPort: 0,
      podman: '/nonexistent/podman',
      hostProcesses: true,
      healthIntervalMs: 100,
      continuousIntervalMs: 200,
    },
  })
  const site = tempDir()
  before(function () {
    if (!existsSync('/bin/busybox')) this.skip()
  })
  after(() => removeDir(site))

  it('a replica failing its continuous check takes no request (503 when it is the only one), and serves again once it passes', async () => {
    const url = t.ln.runtime.deploymentManager!
    const owner = t.wallet
    const port = await freePort()
    writeFileSync(join(site, 'index.html'), 'served')
    writeFileSync(join(site, 'health'), 'ok')
    const check = {type: 'http', method: 'GET', path: '/health', expected_status: 200, continuous: true}
    const cmd = `exec /bin/busybox httpd -f -p 127.0.0.1:${port} -h ${site}`
    const definition = {
      version: '0.1',
      type: 'container',
      ops: [{id: 'web', type: 'container/run', args: {image: 'unused', cmd, expose: [{port, health_checks: [check]}]}}],
    }
    const d = await createDeployment(url, owner, {job_definition: definition, replicas: 1, strategy: 'SIMPLE'})
    t.ln.node.fund(new PublicKey(d.vault), {lamports: 100_000_000n, tokens: 1_000_000n})
    assert.equal((await api(url, owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
    const stable = t.ln.agent!.gateway.deploymentUrl(d.id)
    await eventually('the replica serving at the stable URL', 30_000, async () =>
      (await gatewayGet(stable)).body === 'served' ? true : undefined,
    )
    rmSync(join(site, 'health'))
    const unavailable = await eventually('503 once its continuous check fails', 15_000, async () => {
      const answer = await gatewayGet(stable)
      return answer.status === 503 ? answer : undefined
    })
    assert.match(JSON.parse(unavailable.body).message, /No replica of deployment \S+ is ready to serve \(1 replica/)
    // Its own URL still reaches it: only the stable URL follows the checks.
    const [job] = (await deploymentJobs(url, owner, d.id)).map((j) => j.job)
    assert.equal((await gatewayGet(t.ln.agent!.gateway.jobUrl(job!))).body, 'served')
    writeFileSync(join(site, 'health'), 'ok')
    await eventually('served again once the check passes', 15_000, async () =>
      (await gatewayGet(stable)).body === 'served' ? true : undefined,
    )
    assert.equal((await api(url, owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
    await statusWhen(url, owner, d.id, 'STOPPED', 60_000)
  })
})
