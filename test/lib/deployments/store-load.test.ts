/** The load of a deployment behind several gateways on one store: each writes its share, the others read it. */
import {strict as assert} from 'node:assert'

import type {GatewayTraffic} from '../../../src/lib/deployments/autoscale/gateway-load.js'
import {storeLoad} from '../../../src/lib/deployments/autoscale/store-load.js'
import {eventually} from '../../helpers/eventually.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'

const ID = 'AbC9xyz'

/** A gateway's counts as the test sets them (the gateway's own are tested in test/lib/gateway/holding.test.ts). */
function counts(): GatewayTraffic & {
  set(inFlight: number, held: number, jobs?: Record<string, number>): void
  hold(): void
} {
  let figures = {inFlight: 0, held: 0}
  let jobs: Record<string, number> = {}
  const listeners = new Set<(deployment: string) => void>()
  return {
    traffic: (deployment) => (deployment === ID.toLowerCase() ? figures : {inFlight: 0, held: 0}),
    busy: () => (figures.inFlight + figures.held > 0 ? [{deployment: ID.toLowerCase(), ...figures}] : []),
    onHeld(listener) {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    jobsInFlight: () => jobs,
    set(inFlight, held, byJob = {}) {
      figures = {inFlight, held}
      jobs = byJob
    },
    hold() {
      figures = {...figures, held: figures.held + 1}
      for (const listener of listeners) listener(ID.toLowerCase())
    },
  }
}

describe('deployment load through a shared store', () => {
  let opened: OpenedStore
  beforeEach(async () => (opened = await sqliteStores.open()))
  afterEach(async () => opened.cleanup())

  it("sums its own gateway's figures and the others' fresh ones, and tells a request held elsewhere", async () => {
    const idOf = async (label: string) => (label === ID.toLowerCase() ? ID : null)
    const a = counts()
    const b = counts()
    const loadA = storeLoad(opened.store, a, 'manager-a', idOf)
    const loadB = storeLoad(await opened.reopen(), b, 'manager-b', idOf)
    const heardByB: string[] = []
    loadB.onHeld((id) => heardByB.push(id))
    try {
      a.set(2, 0, {ja: 2})
      b.set(3, 0, {jb: 3})
      await eventually('both shares', 10_000, async () => ((await loadB.load(ID)).inFlight === 5 ? true : undefined))
      // Each writes its requests in flight per job too, for a drain by the other (draining.ts).
      await eventually("a's jobs in flight", 10_000, async () => {
        const found = await opened.store.readJobsInFlight(3000, 'manager-b', Date.now())
        return found.length === 1 && found[0]!.inFlight.ja === 2 ? found : undefined
      })
      a.hold()
      await eventually("a's held request told to b", 10_000, async () => (heardByB.length > 0 ? true : undefined), 50)
      assert.deepEqual(heardByB, [ID])
      const figures = await loadB.load(ID)
      assert.deepEqual([figures.inFlight, figures.held], [5, 1])
      // A manager that stops takes its figures with it.
      await loadA.stop()
      const left = await loadB.load(ID)
      assert.deepEqual([left.inFlight, left.held], [3, 0])
      assert.deepEqual(
        await opened.store.readJobsInFlight(3000, 'manager-b', Date.now()),
        [],
        'nor waited for by drains',
      )
    } finally {
      await loadA.stop()
      await loadB.stop()
    }
  })
})
