/**
 * The decisions rollout.e2e.test.ts sees the manager make inside a localnet, made here by its worker's passes on a
 * clock the test moves and a stand-in chain (test/helpers/manager-standin.ts): the deadlines are crossed by moving
 * the clock, to the millisecond, instead of waiting for them.
 */
import {strict as assert} from 'node:assert'

import {PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import {updateReplicas} from '../../../src/lib/deployments/manager/operations.js'
import {ROLLOUT_DEADLINE_S} from '../../../src/lib/deployments/manager/rollout.js'
import {createRevision, updateActiveRevision} from '../../../src/lib/deployments/manager/revisions.js'
import type {JobRow} from '../../../src/lib/deployments/types.js'
import {verifySignature} from '../../../src/lib/keys/ed25519.js'
import {parseHeader} from '../../../src/lib/node-api/protocol.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {startServer, type TestServer} from '../../helpers/http.js'
import {revised, SERVICE, standinManager, type StandinManager} from '../../helpers/manager-standin.js'

const live = (rows: JobRow[]) => rows.filter((j) => j.state === 'QUEUED' || j.state === 'RUNNING')
const EXPOSING = revised({expose: 8080})

describe('deployment rollout on a moved clock (tick, stand-in chain)', () => {
  let opened: OpenedStore
  let m: StandinManager
  beforeEach(async () => {
    opened = await sqliteStores.open()
    m = standinManager(opened.store)
  })
  afterEach(async () => opened.cleanup())

  /** Passes a second apart, the last one a second or less before `end` (the poll's period decides nothing here). */
  async function passesBefore(end: number) {
    while (m.clock + 1000 < end) {
      m.advance(1000)
      await m.pass()
    }
  }
  /** Passes until `done` holds of the deployment's jobs (a few polls at most); answers them. */
  async function jobsWhen(id: string, timeScale: number, done: (rows: JobRow[]) => boolean): Promise<JobRow[]> {
    for (let i = 0; i < 10; i++) {
      const rows = await m.jobs(id)
      if (done(rows)) return rows
      await m.polls(1, timeScale)
    }
    assert.fail(`not within 10 polls: ${JSON.stringify(await m.jobs(id))}`)
  }
  const eventsOf = async (id: string, type: string) => (await m.events(id)).filter((e) => e.type === type)
  /** A deployment whose `replicas` jobs nodes took and run. */
  async function running(replicas: number, timeScale: number) {
    const d = await m.start({replicas, time_scale: timeScale})
    await jobsWhen(d.id, timeScale, (rows) => rows.length === replicas)
    for (let i = 0; i < replicas; i++) assert.ok(m.chain.take())
    const rows = await jobsWhen(d.id, timeScale, (r) => r.filter((j) => j.state === 'RUNNING').length === replicas)
    return {d, old: rows}
  }

  it('scale 2 -> 3 -> 1: the shortfall listed, then the excess stopped, queued jobs first', async () => {
    const d = await m.start({replicas: 2, time_scale: 10})
    await jobsWhen(d.id, 10, (rows) => live(rows).length === 2)
    const taken = m.chain.take()!
    await jobsWhen(d.id, 10, (rows) => rows.some((j) => j.state === 'RUNNING'))
    await updateReplicas(m.ctx, await m.deployment(d.id), 3)
    await jobsWhen(d.id, 10, (rows) => live(rows).length === 3)
    await updateReplicas(m.ctx, await m.deployment(d.id), 1)
    const after = await jobsWhen(d.id, 10, (rows) => live(rows).length === 1)
    assert.deepEqual(
      live(after).map((j) => j.job),
      [taken],
    )
    assert.equal(after.length, 3)
    // The two queued ones were delisted (their accounts closed: the chain view reads them STOPPED).
    assert.deepEqual(
      after.filter((j) => j.job !== taken).map((j) => [j.state, j.stop_requested]),
      [
        ['STOPPED', true],
        ['STOPPED', true],
      ],
    )
  })

  it('a revision rolls out one replica at a time, the old stopped only once a new one runs; one that never runs is rolled back at its deadline', async () => {
    // time_scale 20: a new replica must run within 30 s.
    const {d, old} = await running(2, 20)
    await assert.rejects(
      createRevision(m.ctx, await m.deployment(d.id), {version: '0.1', type: 'container', ops: []}),
      (error: {code?: string}) => error.code === 'invalid_definition',
    )
    assert.equal((await opened.store.revisions(d.id)).length, 1)
    const second = await createRevision(m.ctx, await m.deployment(d.id), revised({cmd: ['sleep', '3599']}))
    assert.equal(second.active_revision, 2)

    const surge = await jobsWhen(d.id, 20, (rows) => rows.some((j) => j.revision === 2))
    assert.equal(surge.filter((j) => j.revision === 2).length, 1)
    // Polls up to a moment before the deadline, no node taking it: one new replica, both old ones running on.
    const deadline = (ROLLOUT_DEADLINE_S * 1000) / 20
    const listedAt = surge.find((j) => j.revision === 2)!.created_at
    await passesBefore(listedAt + deadline)
    let now = await m.jobs(d.id)
    assert.equal(now.filter((j) => j.revision === 2).length, 1, 'one new replica at a time')
    assert.deepEqual(
      live(now)
        .filter((j) => j.revision === 1)
        .map((j) => [j.state, j.stop_requested]),
      [
        ['RUNNING', false],
        ['RUNNING', false],
      ],
    )
    assert.deepEqual(await eventsOf(d.id, 'REVISION_ROLLED_BACK'), [])

    // It runs: one old replica stopped, a second new one listed; the other old one runs on.
    m.chain.take()
    now = await jobsWhen(d.id, 20, (rows) => live(rows).filter((j) => j.revision === 1).length === 1)
    now = await jobsWhen(d.id, 20, (rows) => rows.filter((j) => j.revision === 2).length === 2)
    assert.equal(live(now).filter((j) => j.revision === 1 && j.state === 'RUNNING').length, 1)
    m.chain.take()
    now = await jobsWhen(d.id, 20, (rows) => live(rows).every((j) => j.revision === 2))
    assert.equal(live(now).length, 2)
    assert.deepEqual(
      now
        .filter((j) => j.revision === 1)
        .map((j) => j.job)
        .sort(),
      old.map((j) => j.job).sort(),
    )
    assert.deepEqual(
      (await eventsOf(d.id, 'REVISION_ROLLED_OUT')).map((e) => e.message),
      ['revision 2 serves every replica'],
    )

    // Revision 3: no node takes its replica. At the deadline it is still waited for; a millisecond past, rolled back.
    const third = await createRevision(m.ctx, await m.deployment(d.id), SERVICE)
    assert.equal(third.active_revision, 3)
    const listed = await jobsWhen(d.id, 20, (rows) => rows.some((j) => j.revision === 3))
    const fresh = listed.find((j) => j.revision === 3)!
    m.advance(fresh.created_at + deadline - m.clock)
    await m.pass()
    assert.deepEqual(await eventsOf(d.id, 'REVISION_ROLLED_BACK'), [], 'not before its deadline')
    assert.equal((await m.deployment(d.id)).active_revision, 3)
    m.advance(1)
    await m.pass()
    const [back] = await eventsOf(d.id, 'REVISION_ROLLED_BACK')
    assert.equal(
      back?.message,
      `revision 3 rolled back to 2: job ${fresh.job} did not serve within 30 s; 1 of its jobs stopped`,
    )
    assert.equal((await m.deployment(d.id)).active_revision, 2)
    now = await jobsWhen(d.id, 20, (rows) => live(rows).every((j) => j.revision === 2))
    assert.equal(live(now).length, 2, 'the replicas of revision 2 served throughout')
    assert.ok(live(now).every((j) => j.state === 'RUNNING'))
    assert.equal(now.find((j) => j.job === fresh.job)!.state, 'STOPPED', 'delisted')
    // No other replica of revision 3 listed after it, however long the clock runs on.
    await m.polls(20, 20)
    assert.equal((await m.jobs(d.id)).filter((j) => j.revision === 3).length, 1)
    assert.deepEqual((await opened.store.revisions(d.id)).map((r) => r.revision).sort(), [1, 2, 3])
    await assert.rejects(
      updateActiveRevision(m.ctx, await m.deployment(d.id), 9),
      (error: {status?: number}) => error.status === 404,
    )
  })

  describe("with its nodes' APIs (a stand-in saying whether each port is online)", () => {
    let online: boolean
    let asked: {path: string; authorization: string}[]
    let nodeApi: TestServer
    beforeEach(async () => {
      online = false
      asked = []
      nodeApi = await startServer((req, res) => {
        asked.push({path: req.url ?? '', authorization: String(req.headers.authorization ?? '')})
        res.writeHead(200, {'content-type': 'application/json'})
        res.end(JSON.stringify({urls: {svc: {port: 8080, status: online ? 'ONLINE' : 'OFFLINE'}}}))
      })
      m = standinManager(opened.store, nodeApi.url)
    })
    afterEach(async () => nodeApi.close())

    it("a new replica serves once its node's API reports its exposed port online: until then the old one runs on", async () => {
      const {d, old} = await running(1, 20)
      await createRevision(m.ctx, await m.deployment(d.id), EXPOSING)
      const listed = await jobsWhen(d.id, 20, (rows) => rows.some((j) => j.revision === 2))
      const fresh = listed.find((j) => j.revision === 2)!
      m.chain.take()
      await jobsWhen(d.id, 20, (rows) => rows.some((j) => j.revision === 2 && j.state === 'RUNNING'))
      // Polls up to the deadline, the port reported offline: asked about, not taken for serving.
      await passesBefore(fresh.created_at + (ROLLOUT_DEADLINE_S * 1000) / 20)
      const node = m.chain.nodeOf(fresh.job)!.toBase58()
      assert.ok(
        asked.some(({path}) => path === `/${node}/job/${fresh.job}/endpoints`),
        JSON.stringify(asked),
      )
      // Asked as the job's poster: the vault signed gpunet's node-API message naming that node and job.
      const header = parseHeader(asked.at(-1)!.authorization)
      assert.ok('message' in header, JSON.stringify(header))
      assert.match(header.message, new RegExp(node))
      assert.ok(
        verifySignature(bs58.decode(header.signature), Buffer.from(header.message), new PublicKey(d.vault).toBytes()),
      )
      let rows = await m.jobs(d.id)
      assert.equal(live(rows).length, 2, 'the old replica runs on while the new one does not serve')
      assert.ok(live(rows).some((j) => j.job === old[0]!.job && !j.stop_requested))
      online = true
      rows = await jobsWhen(d.id, 20, (r) => live(r).length === 1 && live(r)[0]!.revision === 2)
      assert.ok(!live(rows).some((j) => j.job === old[0]!.job))
      assert.equal((await eventsOf(d.id, 'REVISION_ROLLED_OUT')).length, 1)
      assert.deepEqual(await eventsOf(d.id, 'REVISION_ROLLED_BACK'), [])
    })
  })

  it('a new replica that ends on its own (its node finishes it) rolls the revision back at once, before its deadline', async () => {
    const {d, old} = await running(1, 20)
    await createRevision(m.ctx, await m.deployment(d.id), revised({cmd: ['true']}))
    const listed = await jobsWhen(d.id, 20, (rows) => rows.some((j) => j.revision === 2))
    const fresh = listed.find((j) => j.revision === 2)!
    m.chain.take()
    m.chain.finish(fresh.job)
    // The next pass reads it COMPLETED and rolls back, a poll after its listing: far from the 30-s deadline.
    await m.polls(1, 20)
    assert.ok(m.clock - fresh.created_at < (ROLLOUT_DEADLINE_S * 1000) / 20)
    const [back] = await eventsOf(d.id, 'REVISION_ROLLED_BACK')
    assert.equal(back?.message, `revision 2 rolled back to 1: job ${fresh.job} ended on its own; 0 of its jobs stopped`)
    assert.equal((await m.deployment(d.id)).active_revision, 1)
    // The old replica served throughout and is the only one; revision 2 is listed no more, past its deadline too.
    await m.polls(20, 20)
    const after = await m.jobs(d.id)
    assert.deepEqual(
      live(after).map((j) => [j.job, j.state, j.stop_requested]),
      [[old[0]!.job, 'RUNNING', false]],
    )
    assert.equal(after.filter((j) => j.revision === 2).length, 1, 'no other replica of revision 2 listed')
    assert.equal(after.find((j) => j.job === fresh.job)!.state, 'COMPLETED')
    assert.deepEqual(await eventsOf(d.id, 'REVISION_ROLLED_OUT'), [])
  })

  it('a new replica whose job runs but whose exposed port no node API reports online does not serve: rolled back at its deadline', async () => {
    // time_scale 40: a new replica must serve within 15 s. This manager knows no node API (none answers).
    const {d, old} = await running(1, 40)
    await createRevision(m.ctx, await m.deployment(d.id), EXPOSING)
    const listed = await jobsWhen(d.id, 40, (rows) => rows.some((j) => j.revision === 2))
    const fresh = listed.find((j) => j.revision === 2)!
    m.chain.take()
    await jobsWhen(d.id, 40, (rows) => rows.some((j) => j.revision === 2 && j.state === 'RUNNING'))
    assert.equal(live(await m.jobs(d.id)).length, 2, 'the old replica is kept while the new one does not serve')
    m.advance(fresh.created_at + (ROLLOUT_DEADLINE_S * 1000) / 40 - m.clock)
    await m.pass()
    assert.deepEqual(await eventsOf(d.id, 'REVISION_ROLLED_BACK'), [], 'not before its deadline')
    m.advance(1)
    await m.pass()
    const [back] = await eventsOf(d.id, 'REVISION_ROLLED_BACK')
    assert.equal(
      back?.message,
      `revision 2 rolled back to 1: job ${fresh.job} did not serve within 15 s; 1 of its jobs stopped`,
    )
    const after = await jobsWhen(d.id, 40, (rows) => live(rows).length === 1)
    assert.equal(live(after)[0]!.job, old[0]!.job)
    assert.equal(after.find((j) => j.job === fresh.job)!.state, 'COMPLETED', 'its node ended it')
  })
})
