/** The deployment store in one SQLite file (WAL): committed rows survive a crash of the manager's process. */
import {chmodSync, existsSync, mkdirSync} from 'node:fs'
import {dirname} from 'node:path'

import type Database from 'better-sqlite3'

import {keepPrivate, openSqlite} from '../../sqlite/open.js'
import {sqliteApiKeyRows} from './api-keys.js'
import {leaseLost} from './manager-lease.js'
import {
  type DeploymentQuery,
  deploymentGone,
  type DeploymentStore,
  listedTaskChange,
  type MetricCounts,
  type GatewayFigures,
  type NewTask,
  newTaskRow,
  type Workload,
} from './store.js'
import type {DeploymentRow, EventRow, InFlight, JobRow, RevisionRow, TaskRow, VaultRow} from '../types.js'

/** The tables; pg-schema.ts holds PostgreSQL's, and store-contract.test.ts fails when their columns differ. */
export const SQLITE_SCHEMA = `
  CREATE TABLE IF NOT EXISTS deployments (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    owner TEXT NOT NULL,
    vault TEXT NOT NULL,
    market TEXT NOT NULL,
    status TEXT NOT NULL,
    replicas INTEGER NOT NULL,
    timeout INTEGER NOT NULL,
    strategy TEXT NOT NULL,
    time_scale REAL NOT NULL,
    confidential INTEGER NOT NULL,
    active_revision INTEGER NOT NULL,
    started_at INTEGER,
    schedule TEXT,
    rotation_time INTEGER,
    startup_timeout INTEGER,
    throttle_rounds INTEGER NOT NULL DEFAULT 0,
    move_from TEXT,
    move_began INTEGER,
    queue_placement TEXT,
    min_replicas INTEGER,
    max_replicas INTEGER,
    target_concurrency REAL,
    scale_down_after INTEGER,
    calm_since INTEGER,
    budget INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS deployments_owner ON deployments (owner, created_at);
  CREATE INDEX IF NOT EXISTS deployments_status ON deployments (status);
  CREATE TABLE IF NOT EXISTS revisions (
    deployment TEXT NOT NULL,
    revision INTEGER NOT NULL,
    ipfs_definition_hash TEXT NOT NULL,
    job_definition TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (deployment, revision)
  );
  CREATE TABLE IF NOT EXISTS jobs (
    job TEXT PRIMARY KEY,
    deployment TEXT NOT NULL,
    tx TEXT NOT NULL,
    market TEXT NOT NULL,
    revision INTEGER NOT NULL,
    run TEXT NOT NULL,
    state TEXT NOT NULL,
    time_start INTEGER NOT NULL,
    chain_timeout INTEGER NOT NULL,
    time_end INTEGER NOT NULL DEFAULT 0,
    stop_requested INTEGER NOT NULL,
    tunnel TEXT,
    draining_at INTEGER,
    chain_price TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS jobs_deployment ON jobs (deployment, created_at);
  CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    deployment TEXT NOT NULL,
    task TEXT NOT NULL,
    status TEXT NOT NULL,
    job TEXT,
    "limit" INTEGER,
    revision INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    due_at INTEGER NOT NULL,
    in_flight TEXT,
    tx TEXT,
    error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS tasks_open ON tasks (status, due_at);
  CREATE INDEX IF NOT EXISTS tasks_deployment ON tasks (deployment, id);
  CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    deployment TEXT NOT NULL,
    category TEXT NOT NULL,
    type TEXT NOT NULL,
    message TEXT NOT NULL,
    tx TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS events_deployment ON events (deployment, id);
  -- Kept when their deployment is deleted: a vault may still hold the owner's funds.
  CREATE TABLE IF NOT EXISTS vaults (
    vault TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    sealed BLOB NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS vaults_owner ON vaults (owner, created_at);
  -- Who works on a deployment until when (one manager per SQLite file: kept so both stores answer alike).
  CREATE TABLE IF NOT EXISTS leases (
    deployment TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until INTEGER NOT NULL
  );
  -- Each gateway's traffic per deployment (autoscale/store-load.ts): kept so both stores answer alike.
  CREATE TABLE IF NOT EXISTS gateway_load (
    gateway TEXT NOT NULL,
    deployment TEXT NOT NULL,
    in_flight INTEGER NOT NULL,
    held INTEGER NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (gateway, deployment)
  );
  -- Each gateway's requests in flight per job (draining.ts): kept so both stores answer alike.
  CREATE TABLE IF NOT EXISTS gateway_jobs (
    gateway TEXT PRIMARY KEY,
    in_flight TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  -- The vault key's check value (vault-key-check.ts), never the key.
  CREATE TABLE IF NOT EXISTS manager_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
`

/** Columns added after the first release: a store made before gets them on open (SQLite adds a column in place). */
const ADDED_COLUMNS: readonly [table: string, column: string, type: string][] = [
  ['deployments', 'schedule', 'TEXT'],
  ['deployments', 'rotation_time', 'INTEGER'],
  ['deployments', 'startup_timeout', 'INTEGER'],
  ['deployments', 'throttle_rounds', 'INTEGER NOT NULL DEFAULT 0'],
  ['deployments', 'min_replicas', 'INTEGER'],
  ['deployments', 'max_replicas', 'INTEGER'],
  ['deployments', 'target_concurrency', 'REAL'],
  ['deployments', 'scale_down_after', 'INTEGER'],
  ['deployments', 'calm_since', 'INTEGER'],
  ['deployments', 'budget', 'INTEGER'],
  ['jobs', 'time_end', 'INTEGER NOT NULL DEFAULT 0'],
  ['jobs', 'tunnel', 'TEXT'],
  ['deployments', 'move_from', 'TEXT'],
  ['deployments', 'move_began', 'INTEGER'],
  ['deployments', 'queue_placement', 'TEXT'],
  ['jobs', 'draining_at', 'INTEGER'],
  // A job's own price on chain (budget.ts counts its spend at it); a row stored before has none (NULL).
  ['jobs', 'chain_price', 'TEXT'],
]

function addMissingColumns(db: Database.Database): void {
  for (const [table, column, type] of ADDED_COLUMNS) {
    const present = (db.prepare(`PRAGMA table_info(${table})`).all() as {name: string}[]).some((c) => c.name === column)
    if (!present) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`)
  }
}

type Raw = Record<string, unknown>

const deploymentOf = (r: Raw): DeploymentRow => ({
  ...(r as unknown as DeploymentRow),
  confidential: r.confidential === 1,
})
const jobOf = (r: Raw): JobRow => ({...(r as unknown as JobRow), stop_requested: r.stop_requested === 1})
const taskOf = (r: Raw): TaskRow => ({
  ...(r as unknown as TaskRow),
  in_flight: r.in_flight ? (JSON.parse(r.in_flight as string) as InFlight) : null,
})

/** Column values as SQLite stores them: booleans as 0/1. */
function columns<T extends object>(row: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'boolean' ? (v ? 1 : 0) : v]))
}

function insertSql(table: string, row: object): string {
  const names = Object.keys(row)
  return `INSERT INTO ${table} (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})`
}

/** Opens (creating) the store at `file`, mode 0600 in a 0700 folder. */
export function openSqliteDeploymentStore(file: string): DeploymentStore {
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  keepPrivate(file)
  const db = openSqlite(file)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000')
  db.exec(SQLITE_SCHEMA)
  addMissingColumns(db)
  for (const suffix of ['-wal', '-shm']) if (existsSync(`${file}${suffix}`)) chmodSync(`${file}${suffix}`, 0o600)

  // Statements are prepared once and reused (preparing costs more than running): the dynamic ones (updates of chosen
  // columns) by their text.
  const prepared = new Map<string, Database.Statement<unknown[]>>()
  const sql = (text: string) => {
    let statement = prepared.get(text)
    if (!statement) prepared.set(text, (statement = db.prepare<unknown[]>(text)))
    return statement
  }
  const update = (table: string, key: string, value: unknown, change: object, now: number | null) => {
    const set = columns(now === null ? change : {...change, updated_at: now})
    const names = Object.keys(set)
    if (names.length === 0) return
    sql(`UPDATE ${table} SET ${names.map((n) => `"${n}" = @${n}`).join(', ')} WHERE ${key} = @__key`).run({
      ...set,
      __key: value,
    })
  }
  const insert = (table: string, row: object) => sql(insertSql(table, columns(row))).run(columns(row))

  const createAll = db.transaction((deployment: DeploymentRow, revision: RevisionRow, vault: VaultRow | null) => {
    if (vault) insert('vaults', vault)
    insert('deployments', deployment)
    insert('revisions', revision)
  })
  const revised = db.transaction((revision: RevisionRow, now: number) => {
    insert('revisions', revision)
    update('deployments', 'id', revision.deployment, {active_revision: revision.revision}, now)
  })
  const listed = db.transaction((task: TaskRow, job: JobRow, tx: string, now: number, holder?: string) => {
    if (
      holder !== undefined &&
      !sql('SELECT 1 FROM leases WHERE deployment = ? AND holder = ? AND until > ?').get(task.deployment, holder, now)
    )
      throw leaseLost(task.deployment)
    insert('jobs', job)
    update('tasks', 'id', task.id, listedTaskChange(task, tx), now)
  })

  return {
    apiKeyRows: sqliteApiKeyRows(db),
    where: file,
    async createDeployment(deployment, revision, vault) {
      createAll(deployment, revision, vault)
    },
    async deployment(id) {
      const row = sql('SELECT * FROM deployments WHERE id = ?').get(id) as Raw | undefined
      return row && deploymentOf(row)
    },
    async deployments(q: DeploymentQuery) {
      const where = ['owner = @owner']
      const statuses = q.statuses?.length ? q.statuses : undefined
      const strategies = q.strategies?.length ? q.strategies : undefined
      const listed = Object.fromEntries([
        ...(statuses ?? []).map((status, i) => [`status${i}`, status]),
        ...(strategies ?? []).map((strategy, i) => [`strategy${i}`, strategy]),
      ])
      if (statuses) where.push(`status IN (${statuses.map((_, i) => `@status${i}`).join(', ')})`)
      if (strategies) where.push(`strategy IN (${strategies.map((_, i) => `@strategy${i}`).join(', ')})`)
      if (q.vault) where.push('vault = @vault')
      if (q.search) where.push(`(instr(lower(name), lower(@search)) > 0 OR id = @search)`)
      if (q.id) where.push('id = @id')
      if (q.name) where.push('name = @name')
      if (q.createdAfter !== undefined) where.push('created_at > @createdAfter')
      if (q.createdBefore !== undefined) where.push('created_at < @createdBefore')
      const params = {
        ...listed,
        owner: q.owner,
        vault: q.vault,
        search: q.search,
        id: q.id,
        name: q.name,
        createdAfter: q.createdAfter,
        createdBefore: q.createdBefore,
      }
      const filter = where.join(' AND ')
      const bound = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined))
      const total = (sql(`SELECT count(*) AS n FROM deployments WHERE ${filter}`).get(bound) as {n: number}).n
      const order = q.order === 'asc' ? 'ASC' : 'DESC'
      const rows = sql(
        `SELECT * FROM deployments WHERE ${filter} ORDER BY created_at ${order}, id ${order} LIMIT @limit OFFSET @offset`,
      ).all({...bound, limit: q.limit, offset: q.offset}) as Raw[]
      return {rows: rows.map(deploymentOf), total}
    },
    async deploymentsIn(statuses) {
      const rows = sql(
        `SELECT * FROM deployments WHERE status IN (${statuses.map(() => '?').join(', ')}) ORDER BY created_at`,
      ).all(...statuses) as Raw[]
      return rows.map(deploymentOf)
    },
    async updateDeployment(id, change, now) {
      update('deployments', 'id', id, change, now)
      const row = sql('SELECT * FROM deployments WHERE id = ?').get(id) as Raw | undefined
      if (!row) throw deploymentGone(id)
      return deploymentOf(row)
    },
    async moveDeployment(id, from, change, now) {
      const set = columns({...change, updated_at: now})
      const names = Object.keys(set)
      const statuses = Object.fromEntries(from.map((status, i) => [`__from${i}`, status]))
      const moved = sql(
        `UPDATE deployments SET ${names.map((n) => `"${n}" = @${n}`).join(', ')} ` +
          `WHERE id = @__key AND status IN (${Object.keys(statuses)
            .map((n) => `@${n}`)
            .join(', ')})`,
      ).run({...set, ...statuses, __key: id})
      if (moved.changes === 0) return undefined
      return deploymentOf(sql('SELECT * FROM deployments WHERE id = ?').get(id) as Raw)
    },
    async deleteDeployment(id) {
      db.transaction(() => {
        for (const table of ['revisions', 'jobs', 'tasks', 'events', 'leases'])
          sql(`DELETE FROM ${table} WHERE deployment = ?`).run(id)
        sql('DELETE FROM deployments WHERE id = ?').run(id)
      })()
    },
    async revisions(deployment) {
      return sql('SELECT * FROM revisions WHERE deployment = ? ORDER BY revision').all(deployment) as RevisionRow[]
    },
    async revision(deployment, revision) {
      return sql('SELECT * FROM revisions WHERE deployment = ? AND revision = ?').get(deployment, revision) as
        RevisionRow | undefined
    },
    async addRevision(revision, now) {
      revised(revision, now)
      return deploymentOf(sql('SELECT * FROM deployments WHERE id = ?').get(revision.deployment) as Raw)
    },
    async jobs(deployment) {
      return (sql('SELECT * FROM jobs WHERE deployment = ? ORDER BY created_at, job').all(deployment) as Raw[]).map(
        jobOf,
      )
    },
    async job(address) {
      const row = sql('SELECT * FROM jobs WHERE job = ?').get(address) as Raw | undefined
      return row && jobOf(row)
    },
    async updateJob(address, change, now) {
      update('jobs', 'job', address, change, now)
    },
    async tasks(deployment, options = {}) {
      const open = options.open ? ` AND status IN ('PENDING', 'PROCESSING')` : ''
      return (sql(`SELECT * FROM tasks WHERE deployment = ?${open} ORDER BY id`).all(deployment) as Raw[]).map(taskOf)
    },
    async workloads(ids) {
      // The ids as one JSON array: one statement per table, whatever their number.
      const list = JSON.stringify(ids)
      const found = new Map<string, Workload>()
      const rows = sql('SELECT * FROM deployments WHERE id IN (SELECT value FROM json_each(?))').all(list) as Raw[]
      for (const row of rows) found.set(row.id as string, {deployment: deploymentOf(row), jobs: [], openTasks: []})
      const jobs = sql(
        'SELECT * FROM jobs WHERE deployment IN (SELECT value FROM json_each(?)) ORDER BY created_at, job',
      ).all(list) as Raw[]
      for (const row of jobs) found.get(row.deployment as string)?.jobs.push(jobOf(row))
      const tasks = sql(
        `SELECT * FROM tasks WHERE deployment IN (SELECT value FROM json_each(?))
         AND status IN ('PENDING', 'PROCESSING') ORDER BY id`,
      ).all(list) as Raw[]
      for (const row of tasks) found.get(row.deployment as string)?.openTasks.push(taskOf(row))
      return found
    },
    async dueTasks(now) {
      const rows = sql(
        `SELECT * FROM tasks WHERE status IN ('PENDING', 'PROCESSING') AND due_at <= ?
         ORDER BY status = 'PROCESSING' DESC, due_at, id`,
      ).all(now) as Raw[]
      return rows.map(taskOf)
    },
    async addTask(task: NewTask, now) {
      const row = newTaskRow(task, now)
      const id = Number(insert('tasks', row).lastInsertRowid)
      return taskOf(sql('SELECT * FROM tasks WHERE id = ?').get(id) as Raw)
    },
    async updateTask(id, change, now) {
      update('tasks', 'id', id, change, now)
    },
    async saveInFlight(id, inFlight, now) {
      update(
        'tasks',
        'id',
        id,
        inFlight ? {in_flight: JSON.stringify(inFlight), status: 'PROCESSING'} : {in_flight: null},
        now,
      )
    },
    async recordListed(task, job, tx, now, holder) {
      listed(task, job, tx, now, holder)
    },
    async events(deployment) {
      return sql(
        'SELECT deployment, category, type, message, tx, created_at FROM events WHERE deployment = ? ORDER BY id',
      ).all(deployment) as EventRow[]
    },
    async addEvent(event, now) {
      insert('events', {...event, created_at: now})
    },
    async vault(address) {
      return sql('SELECT * FROM vaults WHERE vault = ?').get(address) as VaultRow | undefined
    },
    async addVault(vault) {
      insert('vaults', vault)
    },
    async vaults(owner) {
      return sql('SELECT * FROM vaults WHERE owner = ? ORDER BY created_at').all(owner) as VaultRow[]
    },
    async anyVault() {
      return sql('SELECT * FROM vaults ORDER BY created_at, vault LIMIT 1').get() as VaultRow | undefined
    },
    async claimDeployment(id, holder, forMs, now) {
      // One manager on one machine: its own clock.
      const taken = sql(
        `INSERT INTO leases (deployment, holder, until) VALUES (?, ?, ?)
         ON CONFLICT (deployment) DO UPDATE SET holder = excluded.holder, until = excluded.until
         WHERE leases.holder = excluded.holder OR leases.until <= ?`,
      ).run(id, holder, now + forMs, now)
      return taken.changes === 1
    },
    async releaseDeployment(id, holder) {
      sql('DELETE FROM leases WHERE deployment = ? AND holder = ?').run(id, holder)
    },
    async leases(now) {
      return sql('SELECT deployment, holder FROM leases WHERE until > ? ORDER BY deployment').all(now) as {
        deployment: string
        holder: string
      }[]
    },
    async writeLoad(gateway, figures, now) {
      db.transaction(() => {
        sql('DELETE FROM gateway_load WHERE gateway = ?').run(gateway)
        for (const f of figures)
          sql('INSERT INTO gateway_load (gateway, deployment, in_flight, held, at) VALUES (?, ?, ?, ?, ?)').run(
            gateway,
            f.deployment,
            f.inFlight,
            f.held,
            now,
          )
      })()
    },
    async readLoad(freshMs, except, now, deployment) {
      return sql(
        `SELECT deployment, in_flight AS inFlight, held FROM gateway_load
         WHERE gateway <> ? AND at > ? AND (? IS NULL OR deployment = ?) ORDER BY deployment`,
      ).all(except, now - freshMs, deployment ?? null, deployment ?? null) as GatewayFigures[]
    },
    async markDraining(job, now) {
      sql('UPDATE jobs SET draining_at = ? WHERE job = ? AND draining_at IS NULL').run(now, job)
      return (sql('SELECT draining_at FROM jobs WHERE job = ?').get(job) as {draining_at: number} | undefined)
        ?.draining_at
    },
    async writeJobsInFlight(gateway, inFlight, now) {
      if (inFlight === null) sql('DELETE FROM gateway_jobs WHERE gateway = ?').run(gateway)
      else
        sql(
          `INSERT INTO gateway_jobs (gateway, in_flight, at) VALUES (?, ?, ?)
           ON CONFLICT (gateway) DO UPDATE SET in_flight = excluded.in_flight, at = excluded.at`,
        ).run(gateway, JSON.stringify(inFlight), now)
    },
    async readJobsInFlight(freshMs, except, now) {
      const rows = sql(
        'SELECT gateway, in_flight, at FROM gateway_jobs WHERE gateway <> ? AND at > ? ORDER BY gateway',
      ).all(except, now - freshMs) as {gateway: string; in_flight: string; at: number}[]
      return rows.map((r) => ({
        gateway: r.gateway,
        inFlight: JSON.parse(r.in_flight) as Record<string, number>,
        at: r.at,
      }))
    },
    async keyCheck() {
      const row = sql("SELECT value FROM manager_meta WHERE name = 'vault_key_check'").get() as
        {value: string} | undefined
      return row?.value
    },
    async keepKeyCheck(check) {
      sql("INSERT INTO manager_meta (name, value) VALUES ('vault_key_check', ?) ON CONFLICT DO NOTHING").run(check)
      return (sql("SELECT value FROM manager_meta WHERE name = 'vault_key_check'").get() as {value: string}).value
    },
    async metricCounts(maxVaults) {
      return {
        deployments: sql(
          'SELECT status, strategy, COUNT(*) AS count FROM deployments GROUP BY status, strategy ORDER BY status, strategy',
        ).all() as MetricCounts['deployments'],
        tasks: sql(
          'SELECT task, status, COUNT(*) AS count, SUM(attempts) AS failures FROM tasks GROUP BY task, status ORDER BY task, status',
        ).all() as MetricCounts['tasks'],
        jobs: sql(
          'SELECT state, COUNT(*) AS count FROM jobs GROUP BY state ORDER BY state',
        ).all() as MetricCounts['jobs'],
        vaults: (sql('SELECT vault FROM vaults ORDER BY created_at, vault LIMIT ?').all(maxVaults) as VaultRow[]).map(
          (row) => row.vault,
        ),
        vaultTotal: (sql('SELECT COUNT(*) AS count FROM vaults').get() as {count: number}).count,
      }
    },
    async close() {
      db.close()
    },
  }
}
