/**
 * The worker wakes on a held request (manager/worker.ts startWorker, autoscale/load.ts onHeld): with a poll of one
 * hour, only the wake can explain a pass after the first, so a deployment at 0 replicas scaled up and its replica
 * listed right after a request is held is the wake's doing. The worker's real passes over a stand-in chain
 * (test/helpers/manager-standin.ts); the traffic given by the test as a gateway reports it.
 */
import {strict as assert} from 'node:assert'

import type {DeploymentLoad, LoadFigures} from '../../../src/lib/deployments/autoscale/load.js'
import {startWorker, taskRunner, type Worker} from '../../../src/lib/deployments/manager/worker.js'
import type {DeploymentRow} from '../../../src/lib/deployments/types.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {eventually} from '../../helpers/eventually.js'
import {standinManager, type StandinManager, standinRunners} from '../../helpers/manager-standin.js'

const HOUR_MS = 3_600_000

describe('the worker wakes on a held request (poll of one hour, stand-in chain)', () => {
  let opened: OpenedStore
  let m: StandinManager
  let worker: Worker | undefined
  let traffic: Omit<LoadFigures, 'at'>
  /** Each pass reads the deployment's load once: the reads so far, and what each pass is told on its read. */
  let reads: number
  let onRead: (read: number) => void
  let held: (deployment: string) => void
  beforeEach(async () => {
    opened = await sqliteStores.open()
    m = standinManager(opened.store)
    traffic = {inFlight: 0, held: 0}
    reads = 0
    onRead = () => {}
    held = () => assert.fail('no worker listens')
    const load: DeploymentLoad = {
      load: async () => {
        const figures = {...traffic, at: m.clock}
        onRead(++reads)
        return figures
      },
      onHeld: (listener) => {
        held = listener
        return () => (held = () => {})
      },
    }
    m.ctx.load = load
  })
  afterEach(async () => {
    await worker?.stop()
    worker = undefined
    await opened.cleanup()
  })

  /** A RUNNING SIMPLE-EXTEND deployment at 0 replicas, min 0, max 3, target 2. */
  const atZero = (): Promise<DeploymentRow> =>
    m.start({
      strategy: 'SIMPLE-EXTEND',
      status: 'RUNNING',
      replicas: 0,
      min_replicas: 0,
      max_replicas: 3,
      target_concurrency: 2,
      scale_down_after: 60,
    })
  const start = () => (worker = startWorker(m.ctx, {pollMs: HOUR_MS, run: taskRunner(standinRunners(m.chain))}))
  /** The AUTOSCALE_UP events and the jobs listed, once there are some (within seconds). */
  const scaledUp = (id: string) =>
    eventually('AUTOSCALE_UP and a replica listed', 10_000, async () => {
      const ups = (await m.events(id)).filter((e) => e.type === 'AUTOSCALE_UP')
      const jobs = await m.jobs(id)
      return ups.length > 0 && jobs.length > 0 ? {ups, jobs} : undefined
    })

  it('waiting on its poll: a held request starts a pass at once, which scales up and lists the replica', async () => {
    const d = await atZero()
    // A pass reads the active deployments at its start and at its end (its answer, the next poll's time_scale).
    const store = m.ctx.store
    const deploymentsIn = store.deploymentsIn.bind(store)
    let passEnded: () => void = () => {}
    const firstPass = new Promise<void>((resolve) => (passEnded = resolve))
    let listings = 0
    store.deploymentsIn = async (statuses) => {
      const rows = await deploymentsIn(statuses)
      if (++listings === 2) passEnded()
      return rows
    }
    start()
    await firstPass
    // Past the pass's own answer: the worker waits on its timer now.
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(reads, 1)
    assert.equal((await m.deployment(d.id)).replicas, 0, 'no traffic at the first pass')
    traffic = {inFlight: 0, held: 1}
    held(d.id)
    const {ups, jobs} = await scaledUp(d.id)
    assert.equal(ups.length, 1)
    assert.match(ups[0]!.message, /^0 -> 1 replicas: demand above target \(in flight 0, held 1/)
    assert.equal(jobs.length, 1, 'listed in the pass the wake started')
    assert.equal((await m.deployment(d.id)).replicas, 1)
    assert.equal(reads, 2, 'one pass at start, one on the wake: no poll between')
  })

  it('a request held while a pass is under way: the next pass runs right after it, not at the poll', async () => {
    const d = await atZero()
    // Told during the first pass's read, after it read no traffic: that pass cannot be the one that scales up.
    onRead = (read) => {
      if (read !== 1) return
      traffic = {inFlight: 0, held: 1}
      held(d.id)
    }
    start()
    const {ups, jobs} = await scaledUp(d.id)
    assert.equal(ups.length, 1)
    assert.equal(jobs.length, 1)
    assert.equal(reads, 2)
  })
})
