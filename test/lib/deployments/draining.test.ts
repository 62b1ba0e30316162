import {strict as assert} from 'node:assert'

import {
  Draining,
  drainJob,
  drainMayEnd,
  drainSeenAt,
  type DrainStore,
  inFlightElsewhere,
  isDraining,
} from '../../../src/lib/deployments/draining.js'
import {ROWS_REUSED_MS} from '../../../src/lib/deployments/draining.js'
import type {JobRow} from '../../../src/lib/deployments/types.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {eventually} from '../../helpers/eventually.js'
import {newWallet} from '../../helpers/secrets.js'
import {rows} from './store-contract-suites.js'

/** A deployment's rows with one RUNNING job, `job`. */
function jobRows(id: string, job: string) {
  const row: JobRow = {
    job,
    deployment: id,
    tx: 'tx',
    market: 'market1',
    revision: 1,
    run: 'run',
    state: 'RUNNING',
    time_start: 1,
    chain_timeout: 60,
    stop_requested: false,
    created_at: 0,
    updated_at: 0,
  }
  return {...rows(id, newWallet().address, 0), job: row}
}

describe('draining a replica', () => {
  it('marks the job at once, and waits until no request is in flight to it', async () => {
    const draining = new Draining()
    let inFlight = 2
    draining.countInFlightWith((job) => (job === 'A' ? inFlight : 0))
    const started = Date.now()
    const done = draining.drain('A')
    assert.equal(draining.isDraining('A'), true, 'marked before the wait')
    assert.equal(draining.isDraining('B'), false)
    setTimeout(() => (inFlight = 1), 50)
    setTimeout(() => (inFlight = 0), 150)
    const {waitedMs, inFlight: left} = await done
    assert.equal(left, 0)
    assert.ok(waitedMs >= 140 && Date.now() - started >= 140, `waited ${waitedMs} ms`)
  })

  it('gives up after its cap when a request never ends, saying how many are left', async () => {
    const draining = new Draining()
    draining.countInFlightWith(() => 1)
    const {waitedMs, inFlight} = await draining.drain('A', 100)
    assert.equal(inFlight, 1)
    assert.ok(waitedMs >= 100 && waitedMs < 1000, `waited ${waitedMs} ms`)
  })

  it('forgets a job whose row is closed: its flag goes, the others stay', async () => {
    const draining = new Draining()
    await draining.drain('A')
    await draining.drain('B')
    draining.forget('A')
    assert.deepEqual([draining.isDraining('A'), draining.isDraining('B')], [false, true])
  })

  it('returns at once where nothing counts requests (no stable URL in front)', async () => {
    const {waitedMs, inFlight} = await new Draining().drain('A')
    assert.deepEqual([inFlight, waitedMs < 50], [0, true])
  })
})

describe('draining through the store: which figures count, when the drain may end', () => {
  const at = (gateway: string, inFlight: Record<string, number>, written: number) => ({gateway, inFlight, at: written})
  const MARK = 1_800_000_000_000

  it("sums the other gateways' requests in flight to the job, by its lowercased address", () => {
    const seen = drainSeenAt(MARK)
    assert.deepEqual(
      inFlightElsewhere(
        [at('g1', {abc: 2, other: 5}, seen), at('g2', {abc: 1}, seen + 1), at('g3', {}, seen)],
        'AbC',
        MARK,
      ),
      {inFlight: 3, unsettled: 0},
    )
  })

  it('counts a gateway whose figures were written before it could have seen the mark as unsettled', () => {
    // Its rows were read up to ROWS_REUSED_MS before the mark: it may still send the job a request.
    assert.ok(drainSeenAt(MARK) >= MARK + ROWS_REUSED_MS)
    assert.deepEqual(inFlightElsewhere([at('g1', {}, MARK + 10), at('g2', {}, drainSeenAt(MARK))], 'j', MARK), {
      inFlight: 0,
      unsettled: 1,
    })
    // What it shows in flight counts all the same.
    assert.deepEqual(inFlightElsewhere([at('g1', {j: 2}, MARK - 500)], 'j', MARK), {inFlight: 2, unsettled: 1})
    // No other gateway: nothing to wait for.
    assert.deepEqual(inFlightElsewhere([], 'j', MARK), {inFlight: 0, unsettled: 0})
  })

  it('ends only with nothing in flight here or elsewhere and no gateway unsettled', () => {
    assert.equal(drainMayEnd(0, {inFlight: 0, unsettled: 0}), true)
    assert.equal(drainMayEnd(1, {inFlight: 0, unsettled: 0}), false)
    assert.equal(drainMayEnd(0, {inFlight: 1, unsettled: 0}), false)
    assert.equal(drainMayEnd(0, {inFlight: 0, unsettled: 1}), false)
  })

  it('treats a row marked draining as draining, for a gateway whose manager never drained it', () => {
    const draining = new Draining()
    assert.equal(isDraining({draining}, {job: 'j', draining_at: MARK}), true)
    assert.equal(isDraining({draining}, {job: 'j', draining_at: null}), false)
    assert.equal(isDraining({draining}, {job: 'j'}), false)
    assert.equal(isDraining({}, {job: 'j', draining_at: MARK}), true)
  })
})

describe('draining through a shared store (SQLite file)', () => {
  let opened: OpenedStore
  let reads: number
  /** The store as the drain sees it, its reads of the other gateways' figures counted. */
  let counted: DrainStore
  beforeEach(async () => {
    opened = await sqliteStores.open()
    const r = jobRows('d', 'j')
    await opened.store.createDeployment(r.deployment, r.revision, r.vault)
    const list = await opened.store.addTask(
      {deployment: 'd', task: 'LIST', job: null, limit: 1, revision: 1, due_at: 0},
      0,
    )
    await opened.store.recordListed(list, r.job, 'tx', 0)
    reads = 0
    counted = {
      markDraining: (job, now) => opened.store.markDraining(job, now),
      readJobsInFlight: (...args) => {
        reads++
        return opened.store.readJobsInFlight(...args)
      },
    }
  })
  afterEach(async () => opened.cleanup())

  it('marks the job in the store, and with no other gateway there ends as a lone manager does', async () => {
    const draining = new Draining()
    draining.shareThrough(counted, 'me')
    draining.countInFlightWith(() => 0)
    // Its own gateway's figures do not count (it reads them live).
    await opened.store.writeJobsInFlight('me', {j: 3}, Date.now() + 60_000)
    const {inFlight} = await draining.drain('j')
    assert.equal(inFlight, 0)
    assert.equal(reads, 1, 'one read of the store, no wait')
    assert.notEqual((await opened.store.job('j'))!.draining_at, null)
  })

  it("waits for another gateway's requests in flight to the job, and for a write of it after the mark", async () => {
    const draining = new Draining()
    draining.shareThrough(counted, 'me')
    draining.countInFlightWith(() => 0)
    // Written just now, before the mark: it may not have seen it.
    await opened.store.writeJobsInFlight('other', {}, Date.now())
    let done = false
    const drained = draining.drain('j', 60_000).then((result) => ((done = true), result))
    await eventually('read twice', 10_000, async () => (reads >= 2 ? true : undefined), 10)
    assert.equal(done, false, 'the other gateway is unsettled')
    const marked = (await opened.store.job('j'))!.draining_at!
    // Written after it saw the mark (SQLite's clock is the `now` given): one request still in flight.
    await opened.store.writeJobsInFlight('other', {j: 1}, drainSeenAt(marked))
    const before = reads
    await eventually('read again', 10_000, async () => (reads >= before + 2 ? true : undefined), 10)
    assert.equal(done, false, "the other gateway's request is waited for")
    await opened.store.writeJobsInFlight('other', {}, drainSeenAt(marked) + 1)
    assert.deepEqual((await drained).inFlight, 0)
  })

  it('drains again after a restart, from the first mark, so the figures written since count at once', async () => {
    // The manager that marked it stopped mid-drain a minute ago.
    await opened.store.markDraining('j', Date.now() - 60_000)
    await opened.store.writeJobsInFlight('other', {}, Date.now())
    const restarted = new Draining()
    restarted.shareThrough(counted, 'me')
    assert.equal((await restarted.drain('j', 60_000)).inFlight, 0)
    assert.equal(reads, 1)
    assert.ok((await opened.store.job('j'))!.draining_at! < Date.now() - 30_000, 'the first mark kept')
  })

  it('gives up at its bound when another gateway never ends its request, counting it', async () => {
    const draining = new Draining()
    draining.shareThrough(counted, 'me')
    await opened.store.writeJobsInFlight('other', {j: 2}, Date.now() + 60_000)
    assert.deepEqual((({inFlight, unsettled}) => ({inFlight, unsettled}))(await draining.drain('j', 100)), {
      inFlight: 2,
      unsettled: 0,
    })
  })

  it('says at its bound how many other gateways had not written since the drain began', async () => {
    const draining = new Draining()
    draining.shareThrough(counted, 'me')
    await opened.store.writeJobsInFlight('other', {}, Date.now())
    const lines: string[] = []
    await drainJob({draining, drainTimeoutMs: 100, log: (line) => lines.push(line)}, 'j')
    assert.equal(lines.length, 1)
    assert.match(lines[0]!, /^job j: 1 other gateway\(s\) had not written since the drain began, after \d+ ms$/)
  })
})
