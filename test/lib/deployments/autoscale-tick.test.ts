/**
 * The autoscaler in the worker's tick (manager/autoscaler.ts), on a clock the test moves and a stand-in chain
 * (test/helpers/manager-standin.ts), the traffic given by the test as a gateway would report it: from 0 on a held
 * request, up at once to what the demand needs, down one replica at a time after the window to 0, every decision an
 * event with its figures, and the strategy listing and stopping the jobs for it.
 */
import {strict as assert} from 'node:assert'

import type {DeploymentLoad, LoadFigures} from '../../../src/lib/deployments/autoscale/load.js'
import {isOver} from '../../../src/lib/deployments/strategies/plan.js'
import type {DeploymentRow} from '../../../src/lib/deployments/types.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {standinManager, type StandinManager} from '../../helpers/manager-standin.js'

const WINDOW_S = 60

describe('autoscaling in the tick (stand-in chain, traffic given)', () => {
  let opened: OpenedStore
  let m: StandinManager
  let traffic: Omit<LoadFigures, 'at'>
  beforeEach(async () => {
    opened = await sqliteStores.open()
    m = standinManager(opened.store)
    traffic = {inFlight: 0, held: 0}
    const load: DeploymentLoad = {
      load: async () => ({...traffic, at: m.clock}),
      onHeld: () => () => {},
    }
    m.ctx.load = load
  })
  afterEach(async () => opened.cleanup())

  /** A RUNNING SIMPLE-EXTEND deployment with a policy of target 2 and a 60 s window (its bounds and count as told). */
  const scaled = (change: Partial<DeploymentRow>) =>
    m.start({
      strategy: 'SIMPLE-EXTEND',
      status: 'RUNNING',
      target_concurrency: 2,
      scale_down_after: WINDOW_S,
      max_replicas: 3,
      ...change,
    })
  const alive = async (id: string) => (await m.jobs(id)).filter((j) => !isOver(j.state) && !j.stop_requested).length
  const decisions = async (id: string) =>
    (await m.events(id)).filter((e) => e.type.startsWith('AUTOSCALE_')).map((e) => `${e.type} ${e.message}`)

  it('0 -> 1 on a held request, up to 3 on demand, then down one at a time after the window, to 0', async () => {
    const d = await scaled({replicas: 0, min_replicas: 0})
    await m.polls(2, 1)
    assert.equal((await m.deployment(d.id)).replicas, 0, 'idle at 0 stays at 0')
    assert.equal((await m.jobs(d.id)).length, 0, 'nothing listed, nothing spent')

    traffic = {inFlight: 0, held: 1}
    await m.polls(1, 1)
    assert.equal((await m.deployment(d.id)).replicas, 1)
    assert.equal(await alive(d.id), 1, 'the strategy listed the replica in the same pass')
    assert.match(
      (await decisions(d.id))[0]!,
      /^AUTOSCALE_UP 0 -> 1 replicas: demand above target \(in flight 0, held 1/,
    )

    traffic = {inFlight: 5, held: 0}
    await m.polls(1, 1)
    assert.equal((await m.deployment(d.id)).replicas, 3, 'ceil(5 / 2), at once')
    // A LIST task lists one job a pass.
    await m.polls(1, 1)
    assert.equal(await alive(d.id), 3)

    // Idle: nothing moves within the window; then one replica per window.
    traffic = {inFlight: 0, held: 0}
    await m.polls(1, 1)
    const calm = m.clock
    while (m.clock < calm + WINDOW_S * 1000 - 5000) await m.polls(1, 1)
    assert.equal((await m.deployment(d.id)).replicas, 3, 'held through the window')
    const seen: number[] = [3]
    for (let i = 0; i < 60 && seen.at(-1) !== 0; i++) {
      await m.polls(1, 1)
      const replicas = (await m.deployment(d.id)).replicas
      if (replicas !== seen.at(-1)) seen.push(replicas)
    }
    assert.deepEqual(seen, [3, 2, 1, 0])
    assert.equal(await alive(d.id), 0, 'every job stopped by the strategy')
    const downs = (await decisions(d.id)).filter((e) => e.startsWith('AUTOSCALE_DOWN'))
    assert.equal(downs.length, 3)
    assert.match(downs[0]!, /3 -> 2 replicas: below 70% of target for the window \(in flight 0, held 0, target 2/)
  })

  it('hysteresis: a load just under one replica less keeps the replicas however long', async () => {
    const d = await scaled({replicas: 2, min_replicas: 1})
    // 2 in flight fit in 1 replica at target (2), not at 70% of it (1.4).
    traffic = {inFlight: 2, held: 0}
    await m.polls(40, 1)
    assert.equal((await m.deployment(d.id)).replicas, 2)
    assert.deepEqual(await decisions(d.id), [])
  })

  it('without a gateway reporting traffic, a policy moves nothing', async () => {
    delete m.ctx.load
    const d = await scaled({replicas: 2, min_replicas: 0})
    await m.polls(30, 1)
    assert.equal((await m.deployment(d.id)).replicas, 2)
  })
})
