/**
 * The decisions manager.e2e.test.ts sees the manager make inside a localnet about time and money, made here by its
 * worker's passes on a clock the test moves and a stand-in chain (test/helpers/manager-standin.ts): each extension
 * before the job's end and once, a vault that cannot pay an extension, then funded, and a refused start that
 * funding alone does not start.
 */
import {strict as assert} from 'node:assert'

import {stopDeployment, updateTimeout} from '../../../src/lib/deployments/manager/operations.js'
import {extendLeadMs} from '../../../src/lib/deployments/strategies/durations.js'
import {MAX_ATTEMPTS, POLL_MS, taskRunner, tick} from '../../../src/lib/deployments/manager/worker.js'
import {checkCooldowns} from '../../../src/lib/deployments/cooldowns.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {standinManager, type StandinManager, standinRunners} from '../../helpers/manager-standin.js'

/** time_scale 40, timeout 10 min: jobs of 15 s on chain, extended by 15 s, 1.5 s before their end. */
const SCALE = 40
const JOB_S = 15
const LEAD_MS = extendLeadMs({timeout: 10, time_scale: SCALE})

describe('deployment worker on a moved clock (tick, stand-in chain)', () => {
  let opened: OpenedStore
  let m: StandinManager
  beforeEach(async () => {
    opened = await sqliteStores.open()
    m = standinManager(opened.store)
  })
  afterEach(async () => opened.cleanup())

  /** Passes at the worker's poll for time_scale 40, until the clock reaches `end`. */
  async function pollUntil(end: number) {
    while (m.clock < end) {
      m.advance(Math.min(POLL_MS / SCALE, end - m.clock))
      await m.pass()
    }
  }
  const tasksOf = (id: string) => opened.store.tasks(id)
  const extensionsOf = async (id: string, job: string) =>
    (await tasksOf(id)).filter((t) => t.task === 'EXTEND' && t.job === job && t.status === 'DONE' && t.tx)

  it('SIMPLE-EXTEND, 2 replicas, time_scale 40: each job extended before its end, once per end, until stopped', async () => {
    assert.equal(LEAD_MS, 1500)
    const d = await m.start({strategy: 'SIMPLE-EXTEND', replicas: 2, time_scale: SCALE})
    await m.pass()
    await pollUntil(m.clock + 1000)
    const listed = await m.jobs(d.id)
    assert.equal(listed.length, 2)
    assert.ok(listed.every((j) => j.chain_timeout === JOB_S))
    // Nodes take both at a whole second of the chain's clock, the start both jobs' ends count from.
    m.advance(1000 - (m.clock % 1000))
    const start = m.clock
    m.chain.take()
    m.chain.take()

    // Up to a moment before the first end minus the lead: running, nothing extended.
    const firstDue = start + JOB_S * 1000 - LEAD_MS
    await pollUntil(firstDue - 1)
    assert.ok((await m.jobs(d.id)).every((j) => j.state === 'RUNNING' && j.time_start === start / 1000))
    for (const j of listed) assert.deepEqual(await extensionsOf(d.id, j.job), [])
    // Three ends later, each job was extended three times, each before the end it postponed.
    await pollUntil(start + 3 * JOB_S * 1000 + 1000)
    const events = (await m.events(d.id)).filter((e) => e.type === 'JOB_EXTEND_SUCCESSFUL')
    for (const j of listed) {
      const extensions = await extensionsOf(d.id, j.job)
      assert.equal(extensions.length, 3)
      const confirmed = events.filter((e) => e.message.includes(j.job))
      assert.deepEqual(
        confirmed.map((e) => e.message),
        [1, 2, 3].map((i) => `job ${j.job} extended from ${JOB_S * i} s to ${JOB_S * (i + 1)} s`),
      )
      confirmed.forEach((event, i) => {
        const end = start + JOB_S * 1000 * (i + 1)
        assert.ok(event.created_at >= end - LEAD_MS, `extension ${i + 1} of ${j.job} before its lead`)
        assert.ok(event.created_at < end, `extension ${i + 1} of ${j.job} after its end`)
      })
      assert.equal(m.chain.timeoutOf(j.job), JOB_S * 4)
    }
    const running = await m.deployment(d.id)
    assert.equal(running.status, 'RUNNING')
    assert.equal((await m.jobs(d.id)).filter((j) => j.state === 'RUNNING').length, 2)

    await stopDeployment(m.ctx, running)
    await pollUntil(m.clock + 1000)
    assert.equal((await m.deployment(d.id)).status, 'STOPPED')
    for (const row of await m.jobs(d.id)) {
      assert.equal(row.state, 'COMPLETED')
      assert.equal(row.chain_timeout, JOB_S * (1 + (await extensionsOf(d.id, row.job)).length))
    }
    // Stopped, nothing more is extended, however long the clock runs on.
    const done = (await tasksOf(d.id)).length
    await pollUntil(m.clock + 3 * JOB_S * 1000)
    assert.equal((await tasksOf(d.id)).length, done)
  })

  it('a vault that cannot pay an extension puts the deployment in INSUFFICIENT_FUNDS, retried and never given up; funded, the extension goes through once and it runs again', async () => {
    // Exactly the tokens of one listing (100 x 15 s): the extension finds the vault empty.
    const d = await m.start({strategy: 'SIMPLE-EXTEND', replicas: 1, time_scale: SCALE}, m.chain.price * 15n)
    // The manager's insufficient-funds cooldown (its settings): 20 s doubling, at most 80 s, each divided by 40.
    const ladder = {baseMs: 20_000, maxMs: 80_000, multiplier: 2}
    m.ctx.cooldowns = checkCooldowns({insufficientFunds: ladder})
    await pollUntil(m.clock + 1000)
    const [job] = await m.jobs(d.id)
    assert.ok(job)
    m.advance(1000 - (m.clock % 1000))
    const start = m.clock
    m.chain.take()
    await pollUntil(start + JOB_S * 1000 - LEAD_MS - 1)
    assert.equal((await m.deployment(d.id)).status, 'RUNNING')
    await pollUntil(start + JOB_S * 1000 - LEAD_MS)
    assert.equal((await m.deployment(d.id)).status, 'INSUFFICIENT_FUNDS')
    const errors = (await m.events(d.id)).filter((e) => e.type === 'JOB_EXTEND_ERROR')
    assert.equal(errors.length, 1)
    assert.match(errors[0]!.message, /holds 0 token base units/)
    // Retried on the insufficient-funds ladder while unfunded (0.5 s, 1 s, then 2 s each), past MAX_ATTEMPTS: a lack
    // of funds is not an error to give up on.
    const waits: number[] = []
    const extendTask = async () => (await tasksOf(d.id)).find((t) => t.task === 'EXTEND')!
    while ((await extendTask()).attempts <= MAX_ATTEMPTS) {
      const before = await extendTask()
      waits.push(before.due_at - before.updated_at)
      await pollUntil(before.due_at)
      assert.equal((await extendTask()).attempts, before.attempts + 1, 'retried when due, not before')
    }
    assert.deepEqual(waits, [500, 1000, 2000, 2000, 2000])
    const retryMs = 2000
    const failing = await extendTask()
    assert.ok(failing!.attempts > MAX_ATTEMPTS, `${failing!.attempts} attempts`)
    assert.equal(failing!.status, 'PENDING')
    assert.equal((await m.deployment(d.id)).status, 'INSUFFICIENT_FUNDS')
    assert.equal(m.chain.timeoutOf(job.job), JOB_S)

    m.chain.fund(d.vault, m.chain.price * 15n)
    await pollUntil(m.clock + retryMs)
    assert.equal((await m.deployment(d.id)).status, 'RUNNING')
    const [extended] = await extensionsOf(d.id, job.job)
    assert.ok(extended!.attempts >= 1, 'it failed first')
    assert.equal(m.chain.timeoutOf(job.job), JOB_S * 2)
    assert.equal((await m.events(d.id)).filter((e) => e.type === 'JOB_EXTEND_SUCCESSFUL').length, 1)

    await stopDeployment(m.ctx, await m.deployment(d.id))
    await pollUntil(m.clock + 1000)
    assert.equal((await m.deployment(d.id)).status, 'STOPPED')
    const extensions = (await extensionsOf(d.id, job.job)).length
    assert.equal(extensions, 1)
    assert.equal(m.chain.timeoutOf(job.job), JOB_S * (1 + extensions))
  })

  it('a task that fails for another reason waits the retry cooldown (30 s doubling, scaled) and is given up at MAX_ATTEMPTS', async () => {
    const d = await m.start({strategy: 'SIMPLE', replicas: 1, time_scale: SCALE})
    const failing = taskRunner({
      ...standinRunners(m.chain),
      LIST: async () => {
        throw new Error('the RPC is down')
      },
    })
    const list = async () => (await tasksOf(d.id)).find((t) => t.task === 'LIST')!
    await tick(m.ctx, failing)
    const waits: number[] = []
    while ((await list()).status === 'PENDING') {
      const before = await list()
      waits.push(before.due_at - before.updated_at)
      while (m.clock < before.due_at) {
        m.advance(Math.min(POLL_MS / SCALE, before.due_at - m.clock))
        await tick(m.ctx, failing)
      }
    }
    // 30 s, 60 s, 120 s, 240 s divided by 40; the fifth failure gives it up.
    assert.deepEqual(waits, [750, 1500, 3000, 6000])
    assert.equal((await list()).status, 'FAILED')
    assert.equal((await list()).attempts, MAX_ATTEMPTS)
    assert.equal((await m.deployment(d.id)).status, 'ERROR')
  })

  it('the extend rule: a raised timeout extends the running job by exactly the difference, once; its next extension moves as much', async () => {
    const d = await m.start({strategy: 'SIMPLE-EXTEND', replicas: 1, time_scale: SCALE})
    await pollUntil(m.clock + 1000)
    const [job] = await m.jobs(d.id)
    m.advance(1000 - (m.clock % 1000))
    const start = m.clock
    m.chain.take()
    await pollUntil(start + 2000)
    const chained = (await tasksOf(d.id)).find((t) => t.task === 'EXTEND' && t.status === 'PENDING')!
    assert.equal(chained.due_at, start + JOB_S * 1000 - LEAD_MS)
    // 10 -> 16 minutes: 24 s a job at time_scale 40, 9 s more than the job's 15 s on chain.
    await updateTimeout(m.ctx, await m.deployment(d.id), 16)
    await pollUntil(m.clock + 1000)
    assert.equal(m.chain.timeoutOf(job!.job), 24)
    const tasks = await tasksOf(d.id)
    const oneShot = tasks.filter((t) => t.task === 'EXTEND' && t.status === 'DONE' && t.tx)
    assert.deepEqual(
      oneShot.map((t) => t.limit),
      [9],
    )
    const next = tasks.find((t) => t.task === 'EXTEND' && t.status === 'PENDING')!
    const lead = extendLeadMs({timeout: 16, time_scale: SCALE})
    assert.equal(next.due_at, start + 24_000 - lead, 'the next extension counts from the new end')
    assert.equal(next.limit, null)
    // A lower timeout: nothing more for the running job.
    await updateTimeout(m.ctx, await m.deployment(d.id), 12)
    await pollUntil(m.clock + 1000)
    assert.equal(m.chain.timeoutOf(job!.job), 24)
    assert.equal((await tasksOf(d.id)).filter((t) => t.task === 'EXTEND' && t.limit !== null).length, 1)
  })

  it('a start refused for want of the deposit stays refused once the vault is funded: nothing listed', async () => {
    const d = await m.start({replicas: 3, time_scale: SCALE, status: 'INSUFFICIENT_FUNDS', started_at: null}, 0n)
    m.chain.fund(d.vault, 10_000_000n)
    // Many polls of the worker: the refused start stays refused until started.
    await pollUntil(m.clock + 60_000)
    assert.equal((await m.deployment(d.id)).status, 'INSUFFICIENT_FUNDS')
    assert.deepEqual(await tasksOf(d.id), [])
    assert.deepEqual(await m.jobs(d.id), [])
  })
})
