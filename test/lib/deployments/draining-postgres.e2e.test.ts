/**
 * A drain through PostgreSQL, the store's clock being the database's: the mark and the other gateways' figures are
 * both stamped by it, so a gateway's figures count only once written after it could have seen the mark.
 */
import {strict as assert} from 'node:assert'
import {setTimeout as sleep} from 'node:timers/promises'

import {Draining, drainSeenAt} from '../../../src/lib/deployments/draining.js'
import {type OpenedStore} from '../../helpers/deployment-stores.js'
import {pgStores} from '../../helpers/deployment-stores-postgres.js'
import {eventually} from '../../helpers/eventually.js'
import {newWallet} from '../../helpers/secrets.js'
import {rows} from './store-contract-suites.js'

describe('draining through PostgreSQL', function () {
  this.timeout(60_000)
  let opened: OpenedStore
  before(function () {
    if (pgStores.unavailable() && process.env.CI !== 'true') this.skip()
  })
  beforeEach(async () => {
    opened = await pgStores.open()
    const r = rows('d', newWallet().address, 0)
    await opened.store.createDeployment(r.deployment, r.revision, r.vault)
    const list = await opened.store.addTask(
      {deployment: 'd', task: 'LIST', job: null, limit: 1, revision: 1, due_at: 0},
      0,
    )
    const job = {
      job: 'Jb',
      deployment: 'd',
      tx: 'tx',
      market: 'market1',
      revision: 1,
      run: 'run',
      state: 'RUNNING' as const,
      time_start: 1,
      chain_timeout: 60,
      stop_requested: false,
      created_at: 0,
      updated_at: 0,
    }
    await opened.store.recordListed(list, job, 'tx', 0)
  })
  afterEach(async () => opened?.cleanup())

  it("waits for another manager's gateway: its requests in flight, then a write after it saw the mark", async () => {
    const other = await opened.reopen()
    // Another manager's gateway, writing each 100 ms what it has in flight (the real one writes each second).
    let inFlight: Record<string, number> = {jb: 1}
    let writing = true
    const writer = (async () => {
      while (writing) {
        await other.writeJobsInFlight('other', inFlight, Date.now())
        await sleep(100)
      }
    })()
    try {
      await eventually('the other gateway written', 10_000, async () =>
        (await opened.store.readJobsInFlight(3000, 'me', Date.now())).length === 1 ? true : undefined,
      )
      const draining = new Draining()
      draining.shareThrough(opened.store, 'me')
      let done = false
      const drained = draining.drain('Jb', 30_000).then((result) => ((done = true), result))
      const marked = await eventually('the mark', 10_000, async () => (await other.job('Jb'))?.draining_at ?? undefined)
      await sleep(drainSeenAt(marked) - marked + 500)
      assert.equal(done, false, "the other gateway's request in flight is waited for")
      inFlight = {}
      assert.equal((await drained).inFlight, 0)
      const [last] = await opened.store.readJobsInFlight(3000, 'me', Date.now())
      assert.ok(last!.at >= drainSeenAt(marked), 'ended on figures written after the mark was seen')
    } finally {
      writing = false
      await writer
    }
  })
})
