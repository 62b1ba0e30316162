/**
 * A stop of a deployment with an autoscaling policy (issue 57's investigation): the autoscaler moves only STARTING
 * and RUNNING deployments, so a stop is neither slowed nor undone by it: at 0 replicas with requests held, while a
 * scale-up is being listed, and when the tick read the deployment RUNNING just before the stop came.
 */
import {strict as assert} from 'node:assert'

import type {DeploymentLoad, LoadFigures} from '../../../src/lib/deployments/autoscale/load.js'
import {stopDeployment} from '../../../src/lib/deployments/manager/operations.js'
import {taskRunner, workOn} from '../../../src/lib/deployments/manager/worker.js'
import {isOver} from '../../../src/lib/deployments/strategies/plan.js'
import type {DeploymentRow} from '../../../src/lib/deployments/types.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {standinManager, type StandinManager, standinRunners} from '../../helpers/manager-standin.js'

describe('a stop of a deployment with an autoscaling policy (stand-in chain, traffic given)', () => {
  let opened: OpenedStore
  let m: StandinManager
  let traffic: Omit<LoadFigures, 'at'>
  beforeEach(async () => {
    opened = await sqliteStores.open()
    m = standinManager(opened.store)
    traffic = {inFlight: 0, held: 0}
    const load: DeploymentLoad = {load: async () => ({...traffic, at: m.clock}), onHeld: () => () => {}}
    m.ctx.load = load
  })
  afterEach(async () => opened.cleanup())

  const scaled = (change: Partial<DeploymentRow>) =>
    m.start({
      strategy: 'SIMPLE-EXTEND',
      status: 'RUNNING',
      target_concurrency: 2,
      scale_down_after: 60,
      min_replicas: 0,
      max_replicas: 3,
      ...change,
    })
  const alive = async (id: string) => (await m.jobs(id)).filter((j) => !isOver(j.state)).length
  /** The events after the stop was asked. */
  const afterStop = async (id: string) => {
    const events = await m.events(id)
    return events.slice(events.findIndex((e) => e.type === 'DEPLOYMENT_STOPPING')).map((e) => e.type)
  }

  it('at 0 replicas with requests held: STOPPED in the next pass, nothing listed, no scale-up', async () => {
    const d = await scaled({replicas: 0})
    await m.polls(1, 1)
    traffic = {inFlight: 0, held: 5}
    await stopDeployment(m.ctx, await m.deployment(d.id))
    await m.polls(1, 1)
    const row = await m.deployment(d.id)
    assert.deepEqual([row.status, row.replicas], ['STOPPED', 0])
    assert.equal((await m.jobs(d.id)).length, 0, 'nothing listed')
    assert.deepEqual(await afterStop(d.id), ['DEPLOYMENT_STOPPING', 'DEPLOYMENT_STOPPED'])
  })

  it('while a scale-up is being listed: what was listed is stopped, nothing more listed, STOPPED', async () => {
    const d = await scaled({replicas: 1})
    await m.polls(1, 1)
    traffic = {inFlight: 6, held: 0}
    // Up to 3 at once; a LIST task lists one job a pass, so one is still to be listed.
    await m.polls(1, 1)
    assert.equal((await m.deployment(d.id)).replicas, 3)
    assert.equal(await alive(d.id), 2)
    const listed = (await m.jobs(d.id)).length
    await stopDeployment(m.ctx, await m.deployment(d.id))
    await m.polls(2, 1)
    assert.equal((await m.deployment(d.id)).status, 'STOPPED')
    assert.equal(await alive(d.id), 0)
    assert.equal((await m.jobs(d.id)).length, listed, 'the listing left to do was cancelled')
    assert.equal((await afterStop(d.id)).filter((t) => t.startsWith('AUTOSCALE_')).length, 0)
  })

  it('a tick that read the deployment RUNNING just before the stop: no scale-up, nothing listed', async () => {
    const d = await scaled({replicas: 0})
    await m.polls(1, 1)
    traffic = {inFlight: 0, held: 3}
    // The tick's read, then the owner's stop, then the tick's planning on what it read.
    const read = (await opened.store.workloads([d.id])).get(d.id)!
    await stopDeployment(m.ctx, await m.deployment(d.id))
    await workOn(m.ctx, d.id, taskRunner(standinRunners(m.chain)), read)
    await m.polls(1, 1)
    const row = await m.deployment(d.id)
    assert.deepEqual([row.status, row.replicas], ['STOPPED', 0])
    assert.equal((await m.jobs(d.id)).length, 0, 'nothing listed')
    assert.deepEqual(await afterStop(d.id), ['DEPLOYMENT_STOPPING', 'DEPLOYMENT_STOPPED'])
  })
})
