/**
 * A deployment's move between markets (manager/move.ts): its decisions from rows alone, and the worker's passes on
 * a clock the test moves over a stand-in chain (test/helpers/manager-standin.ts): the new replicas listed beside
 * the old, the old stopped only once every new one runs, a move that cannot finish rolled back at its deadline, a
 * manager reopened mid-move finishing it from the store, and the queue timeout's choice of the next market.
 */
import {strict as assert} from 'node:assert'

import {Keypair} from '@solana/web3.js'

import {Draining} from '../../../src/lib/deployments/draining.js'
import {
  beginMove,
  decideMove,
  MOVE_DEADLINE_S,
  MOVE_EVENTS,
  nextMarket,
  queuedPastTimeout,
} from '../../../src/lib/deployments/manager/move.js'
import {createRevision} from '../../../src/lib/deployments/manager/revisions.js'
import {moveDeployment} from '../../../src/lib/deployments/manager/operations.js'
import {parseQueuePlacement} from '../../../src/lib/deployments/manager/validation.js'
import {queueTimeoutSeconds} from '../../../src/lib/deployments/client/client-create.js'
import type {DeploymentRow, JobRow} from '../../../src/lib/deployments/types.js'
import {placeJob, type PlacementMarket, type PlacementNeed} from '../../../src/lib/market/jobs/placement.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {revised, standinManager, type StandinManager, T0} from '../../helpers/manager-standin.js'

const live = (rows: JobRow[]) =>
  rows.filter((j) => (j.state === 'QUEUED' || j.state === 'RUNNING') && !j.stop_requested)
const A = Keypair.generate().publicKey.toBase58()
const B = Keypair.generate().publicKey.toBase58()

function deployment(change: Partial<DeploymentRow> = {}): DeploymentRow {
  return {
    id: 'd',
    name: 'svc',
    owner: 'o',
    vault: 'v',
    market: B,
    status: 'RUNNING',
    replicas: 2,
    timeout: 10,
    strategy: 'SIMPLE',
    time_scale: 1,
    confidential: false,
    active_revision: 1,
    started_at: T0,
    move_from: A,
    move_began: T0,
    created_at: T0,
    updated_at: T0,
    ...change,
  }
}

function job(name: string, market: string, change: Partial<JobRow> = {}): JobRow {
  return {
    job: name,
    deployment: 'd',
    tx: 't',
    market,
    revision: 1,
    run: 'r',
    state: 'RUNNING',
    time_start: 1,
    chain_timeout: 600,
    stop_requested: false,
    created_at: T0 - 1000,
    updated_at: T0,
    ...change,
  }
}

describe('deployment move: the decision of a pass (decideMove)', () => {
  const old = [job('o1', A), job('o2', A)]
  const fresh = (state: JobRow['state'] = 'RUNNING') => [
    job('n1', B, {state, created_at: T0 + 10}),
    job('n2', B, {state, created_at: T0 + 10}),
  ]
  const ready = (r: JobRow) => r.state === 'RUNNING'

  it('waits while fewer new replicas are ready than the deployment keeps, the old kept', () => {
    const rows = [...old, job('n1', B, {created_at: T0 + 10}), job('n2', B, {state: 'QUEUED', created_at: T0 + 10})]
    const decision = decideMove(deployment(), rows, ready, T0 + 1000)
    assert.equal(decision.step, 'wait')
    assert.deepEqual(decision.step === 'wait' && decision.old.map((r) => r.job), ['o1', 'o2'])
  })

  it('finishes once every new replica is ready: the old ones are the ones to stop', () => {
    const decision = decideMove(deployment(), [...old, ...fresh()], ready, T0 + 1000)
    assert.deepEqual(decision.step === 'finish' && decision.old.map((r) => r.job), ['o1', 'o2'])
  })

  it('a new replica not ready is not counted, even RUNNING (its ports are not online)', () => {
    const decision = decideMove(deployment(), [...old, ...fresh()], (r) => r.job === 'n1', T0 + 1000)
    assert.equal(decision.step, 'wait')
  })

  it('rolls back when a new replica ends on its own, naming it', () => {
    const rows = [...old, job('n1', B, {state: 'COMPLETED', created_at: T0 + 10}), job('n2', B, {created_at: T0 + 10})]
    const decision = decideMove(deployment(), rows, ready, T0 + 1000)
    assert.equal(decision.step, 'roll-back')
    assert.match(decision.step === 'roll-back' ? decision.why : '', /job n1 ended on its own/)
  })

  it('rolls back past the deadline (scaled by time_scale), not a millisecond before', () => {
    const rows = [...old, ...fresh('QUEUED')]
    const d = deployment({time_scale: 20})
    const deadline = (MOVE_DEADLINE_S * 1000) / 20
    assert.equal(decideMove(d, rows, ready, T0 + deadline).step, 'wait')
    const late = decideMove(d, rows, ready, T0 + deadline + 1)
    assert.equal(late.step, 'roll-back')
    assert.match(late.step === 'roll-back' ? late.why : '', /0 of 2 new replicas ready within 30 s/)
  })

  it('is done when nothing is left on the old market (the old ones ended or were stopped)', () => {
    const rows = [job('o1', A, {state: 'COMPLETED'}), job('o2', A, {stop_requested: true}), ...fresh('QUEUED')]
    assert.equal(decideMove(deployment(), rows, ready, T0 + 1000).step, 'done')
  })

  it("jobs listed on the new market before the move began are not the move's", () => {
    // One left on the new market by an earlier run ended on its own long ago: it fails nothing now.
    const rows = [...old, job('x', B, {state: 'COMPLETED', created_at: T0 - 5000}), ...fresh('QUEUED')]
    assert.equal(decideMove(deployment(), rows, ready, T0 + 1000).step, 'wait')
  })
})

describe('deployment queue timeout: the replica that waited and the next market', () => {
  it('the oldest replica QUEUED past the timeout (scaled) on the current market, none before', () => {
    const d = deployment({move_from: null, move_began: null, time_scale: 10, market: A})
    const rows = [
      job('q1', A, {state: 'QUEUED', created_at: T0}),
      job('q0', A, {state: 'QUEUED', created_at: T0 - 1}),
      job('r', A, {created_at: T0 - 100_000}),
    ]
    assert.equal(queuedPastTimeout(d, rows, 60, T0 + 5999), undefined)
    assert.equal(queuedPastTimeout(d, rows, 60, T0 + 6000)?.job, 'q0')
    assert.equal(queuedPastTimeout(d, [job('s', A, {state: 'QUEUED', stop_requested: true})], 60, T0 + 1e9), undefined)
  })

  const market = (name: string, change: Partial<PlacementMarket>): PlacementMarket => ({
    market: name,
    slug: name,
    type: 'PREMIUM',
    gpuModels: ['NVIDIA A100'],
    lowestVram: 80,
    tokenPerHour: 1,
    usdPerHour: 1,
    networkFeePercent: 0,
    freeNodes: 0,
    requiredImages: [],
    ...change,
  })
  const need: PlacementNeed = {gpuModels: [], minVram: 40, maxPrice: null, marketType: null, images: []}

  it('the first fitting market by the order of placement, never the current one or one tried; none when none is left', () => {
    const markets = [
      market('full', {freeNodes: 0, tokenPerHour: 0.5}),
      market('small', {lowestVram: 24, freeNodes: 3, tokenPerHour: 0.1}),
      market('fits', {freeNodes: 2, tokenPerHour: 2}),
      market('fits-dear', {freeNodes: 1, tokenPerHour: 3}),
    ]
    const placement = placeJob(markets, need, 'token')
    assert.equal(nextMarket(placement, 'full', []), 'fits')
    assert.equal(nextMarket(placement, 'full', ['fits']), 'fits-dear')
    assert.equal(nextMarket(placement, 'fits-dear', ['fits']), 'full')
    assert.equal(nextMarket(placement, 'full', ['fits', 'fits-dear']), null)
  })
})

describe('deployment queue timeout: what create takes', () => {
  it('the CLI takes a duration from a minute to the job timeout (exit 2 otherwise)', () => {
    assert.equal(queueTimeoutSeconds('1m', 10), 60)
    assert.equal(queueTimeoutSeconds('10m', 10), 600)
    for (const bad of ['59s', '10m1s', '1.5s', 'soon', '-1m'])
      assert.throws(
        () => queueTimeoutSeconds(bad, 10),
        (e: {exitCode?: number; code?: string}) => e.exitCode === 2 && e.code === 'invalid_queue_timeout',
        bad,
      )
  })

  it('the manager keeps queue_timeout with its need (none: every market fits), and refuses what is out of range', () => {
    assert.equal(parseQueuePlacement({}, 10), null)
    assert.deepEqual(
      JSON.parse(parseQueuePlacement({queue_timeout: 60, need: {minVram: 40, gpuModels: ['A100']}}, 10)!),
      {
        timeout_s: 60,
        need: {gpuModels: ['A100'], minVram: 40, maxPrice: null, marketType: null, images: []},
        tried: [],
      },
    )
    const refused = (body: Record<string, unknown>, code: string) =>
      assert.throws(
        () => parseQueuePlacement(body, 10),
        (e: {code?: string}) => e.code === code,
        JSON.stringify(body),
      )
    refused({queue_timeout: 59}, 'invalid_queue_timeout')
    refused({queue_timeout: 601}, 'invalid_queue_timeout')
    refused({queue_timeout: '60'}, 'invalid_queue_timeout')
    refused({need: {}}, 'invalid_need')
    refused({queue_timeout: 60, need: {minVram: -1}}, 'invalid_need')
    refused({queue_timeout: 60, need: {marketType: 'gold'}}, 'invalid_need')
    refused({queue_timeout: 60, need: {gpuModels: 'A100'}}, 'invalid_need')
  })
})

describe('deployment move on a moved clock (tick, stand-in chain)', () => {
  let opened: OpenedStore
  let m: StandinManager
  beforeEach(async () => {
    opened = await sqliteStores.open()
    m = standinManager(opened.store)
  })
  afterEach(async () => opened.cleanup())

  async function jobsWhen(id: string, done: (rows: JobRow[]) => boolean): Promise<JobRow[]> {
    for (let i = 0; i < 10; i++) {
      const rows = await m.jobs(id)
      if (done(rows)) return rows
      await m.polls(1, 20)
    }
    assert.fail(`not within 10 polls: ${JSON.stringify(await m.jobs(id))}`)
  }
  const types = async (id: string) => (await m.events(id)).map((e) => e.type).filter((t) => t.includes('MOVE'))

  /** A deployment of 2 replicas running on the stand-in's market; a move of it to B begun. */
  async function moving() {
    const d = await m.start({replicas: 2, time_scale: 20})
    await jobsWhen(d.id, (rows) => rows.length === 2)
    m.chain.take()
    m.chain.take()
    const old = await jobsWhen(d.id, (rows) => rows.filter((j) => j.state === 'RUNNING').length === 2)
    await beginMove(m.ctx, await m.deployment(d.id), B, 'asked')
    const surge = await jobsWhen(d.id, (rows) => rows.filter((j) => j.market === B).length === 2)
    return {d, old, surge}
  }

  it('lists every new replica beside the old, and stops the old only once both new ones run', async () => {
    const {d, old} = await moving()
    let rows = await m.jobs(d.id)
    assert.equal(live(rows).length, 4, 'both old replicas serve while the new ones wait')
    m.chain.take()
    await m.polls(2, 20)
    rows = await m.jobs(d.id)
    assert.deepEqual(
      live(rows.filter((j) => j.market === d.market)).map((j) => j.state),
      ['RUNNING', 'RUNNING'],
      'one new replica running is half a move: the old stay',
    )
    m.chain.take()
    rows = await jobsWhen(d.id, (r) => live(r).every((j) => j.market === B))
    assert.equal(live(rows).length, 2)
    assert.ok(old.every((o) => rows.find((r) => r.job === o.job)!.stop_requested))
    const row = await m.deployment(d.id)
    assert.deepEqual([row.market, row.move_from, row.move_began, row.replicas], [B, null, null, 2])
    assert.deepEqual(await types(d.id), [MOVE_EVENTS.started, MOVE_EVENTS.draining, MOVE_EVENTS.moved])
    // The old ones' STOP tasks ran on the stand-in chain: nothing of the old market is left listed.
    await m.polls(2, 20)
    assert.ok(old.every((o) => m.chain.nodeOf(o.job) !== null))
    assert.equal((await opened.store.tasks(d.id, {open: true})).length, 0)
  })

  it('rolls back at its deadline when the new replicas never run: they are stopped, the old kept, the market restored', async () => {
    const {d, old, surge} = await moving()
    const began = (await m.deployment(d.id)).move_began!
    while (m.clock <= began + (MOVE_DEADLINE_S * 1000) / 20) await m.polls(1, 20)
    await m.polls(1, 20)
    const rows = await m.jobs(d.id)
    const row = await m.deployment(d.id)
    assert.deepEqual([row.market, row.move_from], [old[0]!.market, null])
    assert.deepEqual(
      live(rows)
        .map((j) => j.job)
        .sort(),
      old.map((j) => j.job).sort(),
    )
    for (const j of surge.filter((r) => r.market === B)) assert.ok(rows.find((r) => r.job === j.job)!.stop_requested)
    const back = (await m.events(d.id)).find((e) => e.type === MOVE_EVENTS.rolledBack)
    assert.match(back!.message, /0 of 2 new replicas ready within 30 s; 2 new replicas stopped, the old kept/)
    // Nothing more is listed on either market afterwards.
    await m.polls(3, 20)
    assert.equal((await m.jobs(d.id)).length, 4)
  })

  it('a manager opened again mid-move finishes it from the store', async () => {
    const {d} = await moving()
    const again = await opened.reopen()
    m.ctx = {...m.ctx, store: again, draining: new Draining()}
    assert.equal((await again.deployment(d.id))!.move_from, old(d))
    m.chain.take()
    m.chain.take()
    const rows = await jobsWhen(d.id, (r) => live(r).length === 2 && live(r).every((j) => j.market === B))
    assert.equal(rows.length, 4)
    assert.deepEqual(await types(d.id), [MOVE_EVENTS.started, MOVE_EVENTS.draining, MOVE_EVENTS.moved])
  })

  it('update-market refuses the same market (400) and a second move while one is under way (409), changing nothing', async () => {
    const {d} = await moving()
    const row = await m.deployment(d.id)
    await assert.rejects(
      moveDeployment(m.ctx, row, B),
      (e: {status?: number; code?: string}) => e.code === 'same_market',
    )
    await assert.rejects(
      moveDeployment(m.ctx, row, A),
      (e: {status?: number; message?: string}) => e.status === 409 && /is moving from/.test(e.message ?? ''),
    )
    const after = await m.deployment(d.id)
    assert.deepEqual([after.market, after.move_from], [B, row.move_from])
  })

  it('a revision is refused while a move is under way (409): a rollout and a move never run at once', async () => {
    const {d} = await moving()
    await assert.rejects(
      createRevision(m.ctx, await m.deployment(d.id), revised({cmd: ['sleep', '3599']})),
      (error: {status?: number}) => error.status === 409,
    )
  })

  it('a stop during a move ends the move; every replica of both markets is stopped', async () => {
    const {d} = await moving()
    await opened.store.updateDeployment(d.id, {status: 'STOPPING'}, m.clock)
    const rows = await jobsWhen(d.id, (r) => live(r).length === 0)
    assert.equal(rows.length, 4)
    assert.equal((await m.deployment(d.id)).move_from, null)
    assert.ok((await types(d.id)).includes(MOVE_EVENTS.ended))
  })

  it('a queue timeout with no other market that fits says so once and stays', async () => {
    const placement = {
      timeout_s: 60,
      need: {gpuModels: [], minVram: null, maxPrice: null, marketType: null, images: []},
      tried: [],
    }
    const d = await m.start({replicas: 1, time_scale: 20, queue_placement: JSON.stringify(placement)})
    await jobsWhen(d.id, (rows) => rows.length === 1)
    // 60 s at time_scale 20 is 3 s: a pass 4 s after the listing, and three more after it.
    for (let i = 0; i < 4; i++) {
      m.advance(4000)
      await m.pass()
    }
    const events = (await m.events(d.id)).filter((e) => e.type === MOVE_EVENTS.noMarket)
    assert.equal(events.length, 1)
    assert.match(
      events[0]!.message,
      /waited QUEUED \d+ s, past the queue timeout \(60 s scaled by 20\); no other market fits/,
    )
    const row = await m.deployment(d.id)
    assert.equal(row.move_from, null)
    assert.equal(row.market, d.market)
  })
})

/** The market a deployment was on before its move (the stand-in's default). */
function old(d: DeploymentRow): string {
  return d.market
}
