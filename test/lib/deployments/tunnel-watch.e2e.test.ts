/**
 * The tunnel watch end to end on a localnet whose node runs jobs as host processes: an INFINITE deployment of an
 * HTTP service with a GET /health check expecting 200, served at its deployment's domain by the gateway's
 * load-balancer group. Its health page goes (404) while its process keeps running: the group's checks take the
 * member out (`lost`), the manager records FRPS_TUNNEL_LOST, stops the job after the grace (60 s / time_scale) and
 * INFINITE's replacement serves; back inside the grace, FRPS_TUNNEL_RECOVERED and no stop. The group checks run
 * every 200 ms here (10 s on a localnet).
 */
import {strict as assert} from 'node:assert'
import {existsSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {PublicKey} from '@solana/web3.js'

import {api, createDeployment, deploymentEvents, deploymentJobs, type EventJson} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {gatewayGet} from '../../helpers/node.js'
import {freePort} from '../../helpers/ports.js'

describe('tunnel watch on the localnet (host processes)', function () {
  this.timeout(120_000)
  const t = useLocalnet({
    node: {gatewayPort: 0, podman: '/nonexistent/podman', hostProcesses: true, groupCheckIntervalMs: 200},
  })
  let control: string
  before(function () {
    if (!existsSync('/bin/busybox')) this.skip()
    control = tempDir('tunnel-watch-')
  })
  after(() => {
    if (control) removeDir(control)
  })
  /** The deployments a test started, stopped after it whatever its outcome (the node runs one job at a time). */
  let started: string[] = []
  afterEach(async () => {
    const url = t.ln.runtime.deploymentManager!
    for (const id of started) await api(url, t.wallet, 'POST', `/api/deployments/${id}/stop`)
    for (const id of started)
      await eventually('the deployment stopped', 30_000, async () => {
        const rows = await deploymentJobs(url, t.wallet, id)
        return rows.every((r) => r.state !== 'RUNNING' && r.state !== 'QUEUED') ? true : undefined
      })
    started = []
  })

  /**
   * A service answering its job's address at `/` and 200 at `/health`, on `port`; while `<control>/down-<job>`
   * exists its health page is gone (404), its process running on.
   */
  function service(port: number) {
    const down = join(control, 'down-%%global.job%%')
    const cmd =
      'echo %%global.job%% > index.html && echo ok > health && ' +
      `(while true; do if [ -e ${down} ]; then rm -f health; elif [ ! -e health ]; then echo ok > health; fi; ` +
      `sleep 0.1; done) & exec /bin/busybox httpd -f -p 127.0.0.1:${port} -h .`
    const check = {type: 'http', method: 'GET', path: '/health', expected_status: 200}
    return {
      version: '0.1',
      type: 'container',
      ops: [{id: 'web', type: 'container/run', args: {image: 'unused', cmd, expose: [{port, health_checks: [check]}]}}],
    }
  }

  /** Starts an INFINITE deployment of one replica at `timeScale`; answers it and its first job, serving. */
  async function serving(timeScale: number) {
    const url = t.ln.runtime.deploymentManager!
    const d = await createDeployment(url, t.wallet, {
      job_definition: service(await freePort()),
      strategy: 'INFINITE',
      timeout: 60,
      time_scale: timeScale,
    })
    t.ln.node.fund(new PublicKey(d.vault), {lamports: 100_000_000n, tokens: 1_000_000n})
    assert.equal((await api(url, t.wallet, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
    started.push(d.id)
    const domain = t.ln.agent!.gateway.deploymentUrl(d.id)
    const job = await eventually('the job serving', 30_000, async () => {
      const [row] = await deploymentJobs(url, t.wallet, d.id)
      if (row?.state !== 'RUNNING') return undefined
      const answer = await gatewayGet(domain)
      return answer.status === 200 && answer.body.trim() === row.job ? row.job : undefined
    })
    return {url, d, job, domain}
  }
  const typed = async (url: string, id: string, type: string): Promise<EventJson[]> =>
    (await deploymentEvents(url, t.wallet, id)).filter((e) => e.type === type)
  const at = (event: EventJson) => Date.parse(event.created_at)

  it('a service whose health page goes while its process runs: lost, stopped after the grace, replaced', async () => {
    // time_scale 30: a grace of 2 s.
    const {url, d, job, domain} = await serving(30)
    writeFileSync(join(control, `down-${job}`), '')
    const [lost] = await eventually('FRPS_TUNNEL_LOST', 20_000, async () => {
      const found = await typed(url, d.id, 'FRPS_TUNNEL_LOST')
      return found.length > 0 ? found : undefined
    })
    assert.match(lost!.message, new RegExp(`^job ${job} became unreachable .* in 2 s if it does not recover$`))
    const [stopped] = await eventually('the job stopped', 20_000, async () => {
      const found = (await typed(url, d.id, 'JOB_STOPPED_CONFIRMED')).filter((e) => e.message.includes(job))
      return found.length > 0 ? found : undefined
    })
    // Not before the grace ran out (the manager's poll adds at most one pass after it).
    const waited = at(stopped!) - at(lost!)
    assert.ok(waited >= 1900 && waited < 10_000, `stopped ${waited} ms after the tunnel was lost`)
    // INFINITE's replacement serves at the deployment's domain.
    const replacement = await eventually('the replacement serving', 40_000, async () => {
      const rows = await deploymentJobs(url, t.wallet, d.id)
      const other = rows.find((r) => r.job !== job && r.state === 'RUNNING')
      if (!other) return undefined
      const answer = await gatewayGet(domain)
      return answer.status === 200 && answer.body.trim() === other.job ? other.job : undefined
    })
    assert.notEqual(replacement, job)
    assert.equal((await deploymentJobs(url, t.wallet, d.id)).find((r) => r.job === job)?.state, 'COMPLETED')
  })

  it('a service back inside the grace: FRPS_TUNNEL_RECOVERED, its job not stopped', async () => {
    // time_scale 10: a grace of 6 s.
    const {url, d, job, domain} = await serving(10)
    const down = join(control, `down-${job}`)
    writeFileSync(down, '')
    await eventually(
      'FRPS_TUNNEL_LOST',
      20_000,
      async () => ((await typed(url, d.id, 'FRPS_TUNNEL_LOST')).length > 0 ? true : undefined),
      100,
    )
    rmSync(down)
    const [recovered] = await eventually('FRPS_TUNNEL_RECOVERED', 6000, async () => {
      const found = await typed(url, d.id, 'FRPS_TUNNEL_RECOVERED')
      return found.length > 0 ? found : undefined
    })
    assert.match(recovered!.message, new RegExp(`^job ${job} reconnected its network tunnel`))
    // Past the grace's end, and a few polls: the same job serves, nothing stopped.
    await new Promise((resolve) => setTimeout(resolve, 8000))
    const rows = await deploymentJobs(url, t.wallet, d.id)
    assert.deepEqual(
      rows.map((r) => [r.job, r.state]),
      [[job, 'RUNNING']],
    )
    assert.deepEqual(await typed(url, d.id, 'JOB_STOPPED_CONFIRMED'), [])
    assert.equal((await gatewayGet(domain)).body.trim(), job)
  })
})
