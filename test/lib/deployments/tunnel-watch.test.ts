/**
 * The tunnel watch's rules (manager/tunnel-watch.ts) through the worker's real passes (tick), on a clock the test
 * moves and a stand-in chain (test/helpers/manager-standin.ts): the grace is crossed by moving the clock. Fed by a
 * stream of proxy events (the localnet's), and by the manager's own probe when it has none (`deployment serve`),
 * here a stand-in node API saying whether the job's port is online. The end-to-end runs with a real node and
 * gateway are in test/commands/deployment/tunnel-watch.e2e.test.ts.
 */
import {strict as assert} from 'node:assert'

import {type ProxyEvent, ProxyEvents} from '../../../src/lib/gateway/proxy-events.js'
import {taskRunner, tick} from '../../../src/lib/deployments/manager/worker.js'
import {exposingDefinition, tunnelDefinition} from '../../../src/lib/deployments/manager/serving.js'
import {
  followProxies,
  onProxyEvent,
  TUNNEL_GRACE_MS,
  TUNNEL_LOST,
  TUNNEL_RECOVERED,
} from '../../../src/lib/deployments/manager/tunnel-watch.js'
import {Draining} from '../../../src/lib/deployments/draining.js'
import type {DeploymentRow, JobRow} from '../../../src/lib/deployments/types.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {startServer, type TestServer} from '../../helpers/http.js'
import {revised, standinManager, standinRunners, type StandinManager} from '../../helpers/manager-standin.js'

const EXPOSING = revised({expose: 8080})
const live = (rows: JobRow[]) =>
  rows.filter((j) => (j.state === 'QUEUED' || j.state === 'RUNNING') && !j.stop_requested)

describe('tunnel watch (worker passes on a moved clock, stand-in chain)', () => {
  let opened: OpenedStore
  let m: StandinManager
  let online: boolean
  let nodeApi: TestServer
  beforeEach(async () => {
    online = false
    nodeApi = await startServer((_req, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify({urls: {svc: {port: 8080, status: online ? 'ONLINE' : 'OFFLINE'}}}))
    })
    opened = await sqliteStores.open()
    m = standinManager(opened.store, nodeApi.url)
  })
  afterEach(async () => {
    await nodeApi.close()
    await opened.cleanup()
  })

  /** A deployment (INFINITE, one replica, unless told) whose job a node took: RUNNING, its port online. */
  async function running(change: Partial<DeploymentRow> = {}, definition: unknown = EXPOSING) {
    const d = await m.start({strategy: 'INFINITE', replicas: 1, timeout: 120, ...change}, 10n ** 12n, definition)
    await m.polls(1, d.time_scale)
    const job = m.chain.take()!
    online = true
    await m.polls(2, d.time_scale)
    const [row] = live(await m.jobs(d.id))
    assert.deepEqual([row?.job, row?.state], [job, 'RUNNING'])
    return {d, job}
  }
  const event = (d: DeploymentRow, job: string, change: Partial<ProxyEvent>): ProxyEvent => ({
    type: 'unregistered',
    job,
    opId: 'svc',
    port: 8080,
    deploymentId: d.id,
    reason: 'lost',
    timestamp: m.clock,
    ...change,
  })
  const typed = async (id: string, type: string) => (await m.events(id)).filter((e) => e.type === type)
  const stateOf = async (id: string, job: string) => (await m.jobs(id)).find((j) => j.job === job)?.state
  /** Passes until the clock has moved `ms` (at the deployment's poll). */
  async function passFor(d: DeploymentRow, ms: number) {
    const end = m.clock + ms
    while (m.clock < end) await m.polls(1, d.time_scale)
  }

  describe('fed by a stream of proxy events (the localnet)', () => {
    beforeEach(() => {
      m.ctx.tunnelStream = true
    })

    it('lost: FRPS_TUNNEL_LOST, the job kept through the grace (60 s), then stopped and replaced', async () => {
      const {d, job} = await running()
      await onProxyEvent(m.ctx, event(d, job, {}))
      const [lost] = await typed(d.id, TUNNEL_LOST)
      assert.equal(
        lost?.message,
        `job ${job} became unreachable and will be stopped and replaced in 60 s if it does not recover`,
      )
      const lostAt = m.clock
      const [task] = (await opened.store.tasks(d.id, {open: true})).filter((t) => t.task === 'STOP')
      assert.deepEqual([task?.job, task?.due_at], [job, lostAt + TUNNEL_GRACE_MS], 'the grace is a task in the store')
      await passFor(d, 55_000)
      assert.equal(await stateOf(d.id, job), 'RUNNING', 'kept 55 s into the grace')
      assert.equal(live(await m.jobs(d.id)).length, 1, 'no replacement listed during the grace')
      await passFor(d, 10_000)
      assert.equal(await stateOf(d.id, job), 'COMPLETED', 'stopped after the grace')
      // The manager's own stop: marked so, no JOB_ENDED (and no rapid completion, which counts only jobs that ended
      // on their own).
      assert.equal((await opened.store.job(job))?.stop_requested, true)
      assert.deepEqual(await typed(d.id, 'JOB_ENDED'), [])
      const replacement = live(await m.jobs(d.id))
      assert.equal(replacement.length, 1, 'one replacement listed')
      assert.notEqual(replacement[0]!.job, job)
    })

    it('registered inside the grace: FRPS_TUNNEL_RECOVERED, the stop cancelled, the job kept', async () => {
      const {d, job} = await running()
      await onProxyEvent(m.ctx, event(d, job, {}))
      await passFor(d, 30_000)
      await onProxyEvent(m.ctx, event(d, job, {type: 'registered', reason: undefined}))
      const [recovered] = await typed(d.id, TUNNEL_RECOVERED)
      assert.equal(recovered?.message, `job ${job} reconnected its network tunnel; the pending stop was cancelled`)
      await passFor(d, 120_000)
      assert.equal(await stateOf(d.id, job), 'RUNNING')
      assert.deepEqual(
        (await opened.store.tasks(d.id, {open: true})).filter((t) => t.task === 'STOP'),
        [],
      )
      // Lost again later: a new grace, and without a recovery the stop.
      await onProxyEvent(m.ctx, event(d, job, {}))
      assert.equal((await typed(d.id, TUNNEL_LOST)).length, 2)
      await passFor(d, 65_000)
      assert.equal(await stateOf(d.id, job), 'COMPLETED')
    })

    it('a registered event after the grace ran out cancels nothing: the job is stopped', async () => {
      const {d, job} = await running()
      await onProxyEvent(m.ctx, event(d, job, {}))
      m.advance(TUNNEL_GRACE_MS)
      await onProxyEvent(m.ctx, event(d, job, {type: 'registered', reason: undefined}))
      assert.deepEqual(await typed(d.id, TUNNEL_RECOVERED), [])
      await m.polls(2, 1)
      assert.equal(await stateOf(d.id, job), 'COMPLETED')
    })

    it('graceful (an operation ended), or no reason: ignored', async () => {
      const {d, job} = await running()
      await onProxyEvent(m.ctx, event(d, job, {reason: 'graceful'}))
      await onProxyEvent(m.ctx, event(d, job, {reason: undefined}))
      await passFor(d, 120_000)
      assert.deepEqual(await typed(d.id, TUNNEL_LOST), [])
      assert.equal(await stateOf(d.id, job), 'RUNNING')
      assert.equal((await opened.store.job(job))?.tunnel, 'graceful', 'recorded all the same')
    })

    it('non-INFINITE deployments, a deployment not RUNNING, another deployment’s id: ignored', async () => {
      const simple = await running({strategy: 'SIMPLE'})
      await onProxyEvent(m.ctx, event(simple.d, simple.job, {}))
      const other = await running()
      await onProxyEvent(m.ctx, event(other.d, other.job, {deploymentId: simple.d.id}))
      await onProxyEvent(m.ctx, event(other.d, other.job, {deploymentId: undefined}))
      await opened.store.updateDeployment(other.d.id, {status: 'INSUFFICIENT_FUNDS'}, m.clock)
      await onProxyEvent(m.ctx, event(other.d, other.job, {}))
      for (const id of [simple.d.id, other.d.id]) {
        assert.deepEqual(await typed(id, TUNNEL_LOST), [])
        assert.deepEqual(
          (await opened.store.tasks(id, {open: true})).filter((t) => t.task === 'STOP'),
          [],
        )
      }
    })

    it('a burst of lost events (one per port, a snapshot replayed) schedules one stop', async () => {
      const {d, job} = await running()
      const proxies = new ProxyEvents()
      proxies.publish(event(d, job, {port: 8080}))
      proxies.publish(event(d, job, {port: 9090}))
      // Followed after the events: the snapshot gives them, then a live duplicate comes.
      const follower = followProxies(m.ctx, proxies)
      proxies.publish(event(d, job, {port: 8080}))
      await follower.stop()
      assert.equal((await typed(d.id, TUNNEL_LOST)).length, 1)
      assert.equal((await opened.store.tasks(d.id, {open: true})).filter((t) => t.task === 'STOP').length, 1)
    })

    it('a manager killed mid-grace: the next one, with no event, stops the job (the grace is read from the store)', async () => {
      const {d, job} = await running()
      await onProxyEvent(m.ctx, event(d, job, {}))
      await passFor(d, 20_000)
      // Another process: its own holder, no memory of the first, no stream event; the first's lease runs out.
      const restarted = {...m.ctx, holder: 'restarted', draining: new Draining()}
      const run = taskRunner(standinRunners(m.chain))
      const end = m.clock + 130_000
      while (m.clock < end && (await stateOf(d.id, job)) === 'RUNNING') {
        m.advance(5000)
        await tick(restarted, run)
      }
      assert.equal(await stateOf(d.id, job), 'COMPLETED', 'stopped by the restarted manager')
      assert.ok(live(await m.jobs(d.id)).length === 1, 'and replaced')
    })

    it('the grace is divided by the time_scale', async () => {
      const {d, job} = await running({time_scale: 30})
      await onProxyEvent(m.ctx, event(d, job, {}))
      const [lost] = await typed(d.id, TUNNEL_LOST)
      assert.match(lost?.message ?? '', / in 2 s if it does not recover$/)
      const [task] = (await opened.store.tasks(d.id, {open: true})).filter((t) => t.task === 'STOP')
      assert.equal(task!.due_at - m.clock, 2000)
    })

    it('a plan stopping the job during its grace (the deployment stopped) stops it now, not at the grace’s end', async () => {
      const {d, job} = await running()
      await onProxyEvent(m.ctx, event(d, job, {}))
      await opened.store.updateDeployment(d.id, {status: 'STOPPING'}, m.clock)
      await m.polls(3, 1)
      assert.equal(await stateOf(d.id, job), 'COMPLETED')
    })
  })

  describe('fed by the manager’s own probe (no stream: deployment serve)', () => {
    it('a service seen up then not answering: lost, stopped after the grace; back inside it: recovered', async () => {
      const {d, job} = await running()
      assert.equal((await opened.store.job(job))?.tunnel, 'up')
      online = false
      await m.polls(1, 1)
      assert.equal((await typed(d.id, TUNNEL_LOST)).length, 1)
      await passFor(d, 30_000)
      online = true
      await m.polls(1, 1)
      assert.equal((await typed(d.id, TUNNEL_RECOVERED)).length, 1)
      online = false
      await passFor(d, 70_000)
      assert.equal(await stateOf(d.id, job), 'COMPLETED')
      assert.equal((await typed(d.id, TUNNEL_LOST)).length, 2)
      assert.equal(live(await m.jobs(d.id)).length, 1, 'replaced')
    })

    it('behind its gateway, a replica of any strategy is probed (its tunnel up), and no grace stops one', async () => {
      // What `deployment serve`'s gateway reads of a replica is its tunnel: without it no SIMPLE-EXTEND replica serves.
      m.ctx.gateway = {deploymentUrl: (id) => `http://${id}.deploy.localhost/`, online: (j) => j.tunnel === 'up'}
      const {d, job} = await running({strategy: 'SIMPLE-EXTEND'})
      assert.equal((await opened.store.job(job))?.tunnel, 'up')
      online = false
      await passFor(d, 120_000)
      assert.equal((await opened.store.job(job))?.tunnel, 'lost', 'its gateway no longer sends it requests')
      assert.equal(await stateOf(d.id, job), 'RUNNING', 'the grace stop is INFINITE only')
      assert.deepEqual(await typed(d.id, TUNNEL_LOST), [])
      online = true
      await m.polls(1, 1)
      assert.equal((await opened.store.job(job))?.tunnel, 'up')
    })

    it('with no gateway in front, a SIMPLE-EXTEND replica is not probed', async () => {
      const {job} = await running({strategy: 'SIMPLE-EXTEND'})
      assert.equal((await opened.store.job(job))?.tunnel ?? null, null)
    })

    it('a service that never came up is left alone, however long', async () => {
      const d = await m.start({strategy: 'INFINITE', replicas: 1, timeout: 120}, 10n ** 12n, EXPOSING)
      await m.polls(1, 1)
      const job = m.chain.take()!
      await passFor(d, 600_000)
      assert.equal(await stateOf(d.id, job), 'RUNNING')
      assert.deepEqual(await typed(d.id, TUNNEL_LOST), [])
      assert.equal((await opened.store.job(job))?.tunnel ?? null, null)
    })

    it('only HTTP GET checks expecting 200 are probed for the tunnel (frpc runs no other)', async () => {
      const checks = [
        {type: 'http', method: 'GET', path: '/health', expected_status: 200},
        {type: 'http', method: 'POST', path: '/x', expected_status: 200},
        {type: 'http', method: 'GET', path: '/y', expected_status: 204},
        {type: 'websocket', expected_response: 'ok'},
      ]
      const d = await m.start(
        {strategy: 'INFINITE'},
        10n ** 12n,
        revised({expose: [{port: 8080, health_checks: checks}]}),
      )
      const definition = (await exposingDefinition(m.ctx, d.id, 1))!
      const cut = tunnelDefinition(definition)
      const expose = (cut.ops[0]!.args as {expose: {health_checks: unknown[]}[]}).expose
      assert.deepEqual(expose[0]!.health_checks, [checks[0]])
      assert.notEqual(cut, definition)
      // One with only such checks (or none) is read as it is: one probe per pass.
      const plain = revised({expose: [{port: 8080, health_checks: [checks[0]]}]})
      const d2 = await m.start({strategy: 'INFINITE'}, 10n ** 12n, plain)
      const same = (await exposingDefinition(m.ctx, d2.id, 1))!
      assert.equal(tunnelDefinition(same), same)
    })
  })
})
