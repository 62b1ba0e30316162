/**
 * INFINITE's self-healing as the worker's passes decide it (health-watch.ts through tick), on a clock the test moves
 * and a stand-in chain (test/helpers/manager-standin.ts), with a stand-in node API saying whether the job's exposed
 * port is online: the lost window is crossed by moving the clock, to the poll, instead of waiting 60 s for it. The
 * end-to-end check with a real node and the real poll is the INFINITE chaos suite's killed replica.
 */
import {strict as assert} from 'node:assert'

import type {JobRow} from '../../../src/lib/deployments/types.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {startServer, type TestServer} from '../../helpers/http.js'
import {revised, standinManager, type StandinManager} from '../../helpers/manager-standin.js'

const EXPOSING = revised({expose: 8080})
const live = (rows: JobRow[]) =>
  rows.filter((j) => (j.state === 'QUEUED' || j.state === 'RUNNING') && !j.stop_requested)

describe('deployment health watch on a moved clock (tick, stand-in chain and node API)', () => {
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

  /** An INFINITE deployment of one replica whose job a node took and whose port is online. */
  async function serving(timeScale: number) {
    const d = await m.start(
      {strategy: 'INFINITE', replicas: 1, timeout: 120, time_scale: timeScale},
      10n ** 12n,
      EXPOSING,
    )
    await m.polls(1, timeScale)
    assert.equal(live(await m.jobs(d.id)).length, 1, 'its replica listed')
    const job = m.chain.take()!
    online = true
    await m.polls(2, timeScale)
    const [row] = live(await m.jobs(d.id))
    assert.deepEqual([row?.job, row?.state], [job, 'RUNNING'])
    return {d, job}
  }
  const unhealthy = async (id: string) => (await m.events(id)).filter((e) => e.type === 'JOB_UNHEALTHY')

  it('a job offline for less than the lost window (60 s) is kept; back online, its window starts over', async () => {
    const {d, job} = await serving(1)
    online = false
    // 11 polls of 5 s after the first one that saw it offline: 55 s, under the window.
    await m.polls(12, 1)
    assert.deepEqual(await unhealthy(d.id), [])
    online = true
    await m.polls(1, 1)
    online = false
    // Offline again: a new window, so 55 s more is still not 60 s since this offline began.
    await m.polls(12, 1)
    assert.deepEqual(await unhealthy(d.id), [])
    assert.deepEqual(
      live(await m.jobs(d.id)).map((j) => j.job),
      [job],
    )
  })

  it('a job offline for the lost window is stopped and replaced, with an event saying for how long', async () => {
    const {d, job} = await serving(1)
    online = false
    await m.polls(1, 1)
    const firstOffline = m.clock
    while (m.clock - firstOffline < 55_000) await m.polls(1, 1)
    assert.deepEqual(await unhealthy(d.id), [], 'kept up to 55 s')
    await m.polls(1, 1)
    assert.equal(m.clock - firstOffline, 60_000)
    const [event] = await unhealthy(d.id)
    assert.equal(event?.message, `job ${job} failed its health checks for 60 s: stopped and replaced`)
    await m.polls(2, 1)
    const rows = await m.jobs(d.id)
    assert.equal(rows.find((j) => j.job === job)?.state, 'COMPLETED', 'the unhealthy job stopped')
    const replacement = live(rows)
    assert.equal(replacement.length, 1, 'one replacement listed')
    assert.notEqual(replacement[0]!.job, job)
  })

  it('at time_scale 90 the window is still two of the node’s 30-s checks: one failed check does not replace a job', async () => {
    const {d, job} = await serving(90)
    online = false
    await m.polls(1, 90)
    const firstOffline = m.clock
    // 60 s / 90 would be 0.7 s: one failed check and a little more (31 s) keeps the job.
    while (m.clock - firstOffline < 31_000) await m.polls(1, 90)
    assert.deepEqual(await unhealthy(d.id), [])
    while (m.clock - firstOffline < 60_000) await m.polls(1, 90)
    const [event] = await unhealthy(d.id)
    assert.match(event?.message ?? '', new RegExp(`^job ${job} failed its health checks for 60 s`))
  })
})
