/**
 * The deployment manager without a chain (issue 38's benchmark). First the CPU of one manager tick over 1,000
 * deployments of 3 replicas: the strategies alone, then with the store's reads (the rows, jobs and open tasks of all
 * the deployments in a few set-based reads, the store's workloads), on SQLite and on PostgreSQL (target: under
 * 100 ms). Then the task throughput of one and of three
 * managers on one PostgreSQL, each running the worker's passes under the deployments' leases (worker.ts's tick), with a stand-in for
 * the chain that takes SEND_MS per task, side by side; each task must be run exactly once. PostgreSQL is
 * GPUNET_TEST_DATABASE_URL (a schema of its own, dropped after); without it the PostgreSQL figures are skipped.
 */
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'
import pg from 'pg'

import type {ManagerContext} from '../src/lib/deployments/context.js'
import {openPgDeploymentStore} from '../src/lib/deployments/store/pg-store.js'
import {openSqliteDeploymentStore} from '../src/lib/deployments/store/sqlite-store.js'
import type {DeploymentStore} from '../src/lib/deployments/store/store.js'
import {STRATEGY_PLANS, type JobOnChain} from '../src/lib/deployments/strategies/index.js'
import {ACTIVE_STATUSES, type DeploymentRow} from '../src/lib/deployments/types.js'
import {tick, type TaskRunner} from '../src/lib/deployments/manager/worker.js'

const DEPLOYMENTS = 1000
const REPLICAS = 3
const TICK_TARGET_MS = 100
/** The stand-in chain's time per task: a confirmed transaction on a fast RPC. */
const SEND_MS = 20
const TASKS = 300

const NOW = Date.now()

function deploymentRow(i: number, status: DeploymentRow['status']): DeploymentRow {
  return {
    id: `bench-${String(i).padStart(5, '0')}`,
    name: `svc ${i}`,
    owner: 'owner',
    vault: Keypair.generate().publicKey.toBase58(),
    market: 'market',
    status,
    replicas: REPLICAS,
    timeout: 60,
    strategy: i % 2 ? 'SIMPLE' : 'SIMPLE-EXTEND',
    time_scale: 1,
    confidential: false,
    active_revision: 1,
    started_at: NOW - 600_000,
    created_at: NOW - 600_000 + i,
    updated_at: NOW,
  }
}

/** 1,000 running deployments, each with its 3 jobs running on chain (as last read). */
async function fill(store: DeploymentStore): Promise<void> {
  for (let i = 0; i < DEPLOYMENTS; i++) {
    const d = deploymentRow(i, 'RUNNING')
    await store.createDeployment(
      d,
      {deployment: d.id, revision: 1, ipfs_definition_hash: 'Qm', job_definition: '{}', created_at: NOW},
      {vault: d.vault, owner: d.owner, sealed: Buffer.alloc(93), created_at: NOW},
    )
    for (let r = 0; r < REPLICAS; r++) {
      const job = `${d.id}-job${r}`
      const at = NOW - 300_000
      await store.addTask({deployment: d.id, task: 'LIST', job: null, limit: 1, revision: 1, due_at: at}, at)
      const [task] = await store.tasks(d.id, {open: true})
      await store.recordListed(
        task!,
        {
          job,
          deployment: d.id,
          tx: `tx-${job}`,
          market: 'market',
          revision: 1,
          run: `run-${job}`,
          state: 'RUNNING',
          time_start: Math.floor(at / 1000),
          chain_timeout: 3600,
          stop_requested: false,
          created_at: at,
          updated_at: at,
        },
        `tx-${job}`,
        at,
      )
    }
  }
}

/** The manager's CPU (user + system) in ms for `work`, the median of a few runs. */
async function cpuMs(work: () => Promise<void> | void, runs = 5): Promise<number> {
  await work() // warm-up
  const figures: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage()
    await work()
    const used = process.cpuUsage(start)
    figures.push((used.user + used.system) / 1000)
  }
  return figures.sort((a, b) => a - b)[Math.floor(runs / 2)]!
}

/**
 * One tick's planning, with the chain's view taken from the rows (as refreshJobs answers for jobs read): the rows,
 * jobs and open tasks of all the deployments in a few reads (the store's workloads, as worker.ts's tick reads them).
 */
async function tickWithoutChain(store: DeploymentStore): Promise<number> {
  let planned = 0
  const active = await store.deploymentsIn(ACTIVE_STATUSES)
  for (const {deployment, jobs: rows, openTasks} of (await store.workloads(active.map((d) => d.id))).values()) {
    const jobs: JobOnChain[] = rows.map((row) => ({
      job: row.job,
      state: row.state,
      timeStart: row.time_start,
      timeout: row.chain_timeout,
      created_at: row.created_at,
      stop_requested: row.stop_requested,
    }))
    const plan = STRATEGY_PLANS[deployment.strategy]({deployment, jobs, openTasks, now: NOW})
    planned += plan.tasks.length
  }
  return planned
}

async function planOnly(): Promise<number> {
  const inputs = Array.from({length: DEPLOYMENTS}, (_, i) => {
    const deployment = deploymentRow(i, 'RUNNING')
    const jobs: JobOnChain[] = Array.from({length: REPLICAS}, (_, r) => ({
      job: `${deployment.id}-job${r}`,
      state: 'RUNNING',
      timeStart: Math.floor((NOW - 300_000) / 1000),
      timeout: 3600,
      created_at: NOW - 300_000,
      stop_requested: false,
    }))
    return {deployment, jobs, openTasks: [], now: NOW}
  })
  return cpuMs(() => {
    for (const input of inputs) STRATEGY_PLANS[input.deployment.strategy](input)
  })
}

/** Tasks done per second by `managers` managers on one database, each running the worker's lease loop. */
async function throughput(
  stores: DeploymentStore[],
  seed: DeploymentStore,
): Promise<{perSecond: number; twice: number}> {
  // STOPPED deployments with a due STOP task each: the worker runs their tasks without planning (no chain here).
  const ids: string[] = []
  for (let i = 0; i < TASKS; i++) {
    const d = {...deploymentRow(100_000 + i, 'STOPPED'), id: `tp-${Date.now()}-${i}`}
    await seed.createDeployment(
      d,
      {deployment: d.id, revision: 1, ipfs_definition_hash: 'Qm', job_definition: '{}', created_at: NOW},
      {vault: d.vault, owner: d.owner, sealed: Buffer.alloc(93), created_at: NOW},
    )
    await seed.addTask({deployment: d.id, task: 'STOP', job: 'j', limit: null, revision: 1, due_at: NOW - 1}, NOW - 1)
    ids.push(d.id)
  }
  const runs = new Map<number, number>()
  const run: TaskRunner = async (ctx, _deployment, task) => {
    await new Promise((resolve) => setTimeout(resolve, SEND_MS))
    runs.set(task.id, (runs.get(task.id) ?? 0) + 1)
    await ctx.store.updateTask(task.id, {status: 'DONE'}, Date.now())
  }
  const start = performance.now()
  await Promise.all(
    stores.map(async (store, m) => {
      const ctx = {
        store,
        now: Date.now,
        log: () => {},
        env: {},
        holder: `bench-manager-${m}`,
      } as unknown as ManagerContext
      // The worker's passes (tick), back to back, until no task is left.
      while ((await store.dueTasks(Date.now())).some((t) => ids.includes(t.deployment))) await tick(ctx, run)
    }),
  )
  const seconds = (performance.now() - start) / 1000
  return {perSecond: TASKS / seconds, twice: [...runs.values()].filter((n) => n > 1).length}
}

export default async function bench(): Promise<void> {
  const plan = await planOnly()
  process.stdout.write(
    `strategies alone, ${DEPLOYMENTS} deployments x ${REPLICAS} replicas: ${plan.toFixed(1)} ms CPU\n`,
  )

  const dir = await mkdtemp(join(tmpdir(), 'gpunet-bench-deploy-'))
  const sqlite = openSqliteDeploymentStore(join(dir, 'deployments.db'))
  await fill(sqlite)
  const sqliteTick = await cpuMs(async () => void (await tickWithoutChain(sqlite)))
  await sqlite.close()
  await rm(dir, {recursive: true, force: true})

  const url = process.env.GPUNET_TEST_DATABASE_URL
  if (!url) {
    process.stdout.write(
      `one tick (store + strategies), SQLite: ${sqliteTick.toFixed(1)} ms CPU (target < ${TICK_TARGET_MS} ms)\n`,
    )
    process.stdout.write('PostgreSQL figures skipped: set GPUNET_TEST_DATABASE_URL=postgres://…\n')
    return
  }
  const schema = `gpunet_bench_${process.pid}`
  try {
    const stores = await Promise.all([0, 1, 2].map(() => openPgDeploymentStore({connectionString: url, schema})))
    await fill(stores[0]!)
    const pgTick = await cpuMs(async () => void (await tickWithoutChain(stores[0]!)))
    process.stdout.write(
      `one tick (store + strategies), manager CPU ms: SQLite ${sqliteTick.toFixed(1)}, PostgreSQL ${pgTick.toFixed(1)}` +
        ` (target < ${TICK_TARGET_MS} ms: ${Math.max(sqliteTick, pgTick) < TICK_TARGET_MS ? 'met' : 'MISSED'})\n`,
    )
    for (const store of stores) await store.close()
    // The throughput on a schema of its own: the worker would plan the running deployments above (on a chain).
    const tasks = await Promise.all(
      [0, 1, 2].map(() => openPgDeploymentStore({connectionString: url, schema: `${schema}_tasks`})),
    )
    const one = await throughput(tasks.slice(0, 1), tasks[0]!)
    const three = await throughput(tasks, tasks[0]!)
    for (const store of tasks) await store.close()
    process.stdout.write(
      `tasks per second on PostgreSQL (${SEND_MS} ms per send): 1 manager ${one.perSecond.toFixed(0)}, ` +
        `3 managers ${three.perSecond.toFixed(0)} (x${(three.perSecond / one.perSecond).toFixed(2)}); ` +
        `tasks run twice: ${one.twice + three.twice}\n`,
    )
  } finally {
    const client = new pg.Client({connectionString: url})
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.query(`DROP SCHEMA IF EXISTS ${schema}_tasks CASCADE`)
    await client.end()
  }
}
