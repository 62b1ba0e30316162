/**
 * The budget's check before a payment (paying/budget-gate.ts) on a real SQLite store: a payment within the budget
 * goes ahead; one past it is not sent (its task done with the figures, event BUDGET_REACHED), keeping the replicas
 * alive when a listing is refused beside them, stopping the deployment when none is alive or an extension is refused.
 */
import {strict as assert} from 'node:assert'

import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {payWithinBudget} from '../../../src/lib/deployments/paying/budget-gate.js'
import type {DeploymentRow, JobRow} from '../../../src/lib/deployments/types.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {standinManager, type StandinManager} from '../../helpers/manager-standin.js'

const PRICE = 10n
/** 10-minute jobs: a deposit of 6000 at PRICE. */
const DEPOSIT = PRICE * 600n

describe('the budget before a payment (budget-gate.ts)', () => {
  let opened: OpenedStore
  let m: StandinManager
  let ctx: ManagerContext
  beforeEach(async () => {
    opened = await sqliteStores.open()
    m = standinManager(opened.store)
    ctx = m.ctx
  })
  afterEach(async () => opened.cleanup())

  const withJobs = async (change: Partial<DeploymentRow>, jobs: Partial<JobRow>[]) => {
    const d = await m.start({strategy: 'SIMPLE-EXTEND', status: 'RUNNING', replicas: 3, ...change})
    for (const [i, job] of jobs.entries()) {
      const list = await opened.store.addTask(
        {deployment: d.id, task: 'LIST', job: null, limit: 1, revision: 1, due_at: m.clock},
        m.clock,
      )
      await opened.store.recordListed(
        list,
        {
          job: `${d.id}-job${i}`,
          deployment: d.id,
          tx: `tx${i}`,
          market: d.market,
          revision: 1,
          run: `run${i}`,
          state: 'RUNNING',
          time_start: 1000,
          chain_timeout: 600,
          time_end: 0,
          stop_requested: false,
          created_at: m.clock,
          updated_at: m.clock,
          ...job,
        },
        `tx${i}`,
        m.clock,
      )
    }
    return d
  }
  const listTask = (d: DeploymentRow) =>
    opened.store.addTask({deployment: d.id, task: 'LIST', job: null, limit: 1, revision: 1, due_at: m.clock}, m.clock)

  it('lets a payment through while spend + deposit stays within the budget, and always without one', async () => {
    const d = await withJobs({budget: Number(DEPOSIT * 2n)}, [{}])
    assert.equal(await payWithinBudget(ctx, d, await listTask(d), DEPOSIT, PRICE), true)
    const free = await withJobs({budget: null}, [{}, {}, {}])
    assert.equal(await payWithinBudget(ctx, free, await listTask(free), DEPOSIT * 100n, PRICE), true)
  })

  it('a listing past the budget beside running replicas: not sent, the replicas kept and the count lowered to them', async () => {
    // Two running (12000 spent), one ended early (paid 100 s: 1000): 13000 + 6000 > 18000.
    const d = await withJobs({budget: 18_000}, [{}, {}, {state: 'STOPPED', time_end: 1100}])
    const task = await listTask(d)
    assert.equal(await payWithinBudget(ctx, d, task, DEPOSIT, PRICE), false)
    const row = await m.deployment(d.id)
    assert.deepEqual([row.status, row.replicas], ['RUNNING', 2])
    const done = (await opened.store.tasks(d.id)).find((t) => t.id === task.id)!
    assert.equal(done.status, 'DONE')
    assert.match(done.error ?? '', /^budget reached: spent 13000 of the budget's 18000 token base units/)
    const event = (await m.events(d.id)).at(-1)!
    assert.equal(event.type, 'BUDGET_REACHED')
    assert.match(event.message, /2 replicas kept, none added$/)
  })

  it('a listing past the budget with nothing alive stops the deployment', async () => {
    const d = await withJobs({budget: 6_500}, [{state: 'COMPLETED', time_end: 1600}])
    assert.equal(await payWithinBudget(ctx, d, await listTask(d), DEPOSIT, PRICE), false)
    assert.equal((await m.deployment(d.id)).status, 'STOPPING')
    assert.match((await m.events(d.id)).at(-1)!.message, /the deployment stops$/)
  })

  it('an extension past the budget stops the deployment', async () => {
    const d = await withJobs({budget: 7_000}, [{}])
    const extend = await opened.store.addTask(
      {deployment: d.id, task: 'EXTEND', job: `${d.id}-job0`, limit: null, revision: 1, due_at: m.clock},
      m.clock,
    )
    assert.equal(await payWithinBudget(ctx, d, extend, DEPOSIT, PRICE), false)
    assert.equal((await m.deployment(d.id)).status, 'STOPPING')
  })

  it('counts each job at its own price, not the market price now: a market that got cheaper does not hide a spend', async () => {
    // Two jobs listed at 10 a second (6000 each); the market charges 1 now (a deposit of 600). At the market's
    // price they would count 1200 and a listing fit 2000; at their own, 12000 + 600 does not.
    const d = await withJobs({budget: 2_000}, [{chain_price: '10'}, {chain_price: '10'}])
    const task = await listTask(d)
    assert.equal(await payWithinBudget(ctx, d, task, 600n, 1n), false)
    assert.match((await opened.store.tasks(d.id)).find((t) => t.id === task.id)!.error ?? '', /spent 12000 of/)
    // A row stored before prices were recorded (none) falls back to the market's price.
    const old = await withJobs({budget: 2_000}, [{chain_price: null}, {chain_price: null}])
    assert.equal(await payWithinBudget(ctx, old, await listTask(old), 600n, 1n), true)
  })

  it("counts an extension in flight at its job's own price", async () => {
    // One job at 10 a second (6000), its extension by 600 s in flight (6000 more at its price; 600 at the market's 1).
    const d = await withJobs({budget: 12_500}, [{chain_price: '10'}])
    const extend = await opened.store.addTask(
      {deployment: d.id, task: 'EXTEND', job: `${d.id}-job0`, limit: null, revision: 1, due_at: m.clock},
      m.clock,
    )
    await opened.store.saveInFlight(
      extend.id,
      {raw: 'AA==', signature: 's', lastValidBlockHeight: 1, timeoutBefore: 600, timeoutAfter: 1200},
      m.clock,
    )
    const task = await listTask(d)
    assert.equal(await payWithinBudget(ctx, d, task, 600n, 1n), false)
    assert.match((await opened.store.tasks(d.id)).find((t) => t.id === task.id)!.error ?? '', /spent 12000 of/)
  })
})
