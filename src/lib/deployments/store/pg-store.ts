/**
 * The deployment store in PostgreSQL, for several managers on one database (docs/deployment-manager.md). The same
 * interface and answers as the SQLite store (store-contract.test.ts runs one suite on both); the schema is
 * pg-schema.ts's. While the database cannot be reached, every call fails with `store_unavailable` (the API answers
 * 503, the worker retries on its next poll); nothing is kept in memory meanwhile, so nothing is lost.
 */
import pg from 'pg'

import {ExitCode, GpunetError} from '../../errors.js'
import {databaseFailure, isDatabaseUnreachable, redactUrl} from '../../secrets/service/pg-failure.js'
import type {ApiKeyRow, ApiKeyRows, ApiKeySummary} from './api-keys.js'
import {leaseLost} from './manager-lease.js'
import {migrate} from './pg-schema.js'
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

export interface PgStoreOptions {
  connectionString: string
  /** A schema of its own (created if missing), e.g. one per test; default `public`. */
  schema?: string
  maxConnections?: number
  /** How long opening a connection may take (default 10 s). */
  connectTimeoutMs?: number
}

type Raw = Record<string, unknown>

/**
 * The database's clock in ms, for leases: managers on several machines agree on it whatever their own clocks say
 * (clock_timestamp, not now(): a transaction's start would lag behind in a long transaction).
 */
const DB_NOW = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint'

/** BIGINT (oid 20) as a number: the store's values are unix ms and ids, far below 2^53. */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (text: string) => Number(text) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

const taskOf = (r: Raw): TaskRow => ({
  ...(r as unknown as TaskRow),
  in_flight: r.in_flight ? (JSON.parse(r.in_flight as string) as InFlight) : null,
})

/** The database is unreachable now: the API answers 503 (http/api-error.ts), the worker tries again on its next poll. */
function unavailable(where: string, error: unknown): GpunetError {
  return new GpunetError('store_unavailable', `the deployment store (PostgreSQL at ${where}) cannot be reached now`, {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'try again shortly: the manager catches up on its tasks once the database is back',
    cause: error,
  })
}

/** Opens the store, running the migrations not yet applied (once, whichever manager starts first). */
export async function openPgDeploymentStore(options: PgStoreOptions): Promise<DeploymentStore> {
  const schema = options.schema ?? 'public'
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`)
  const where = redactUrl(options.connectionString)
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    // pg waits forever by default: a database behind a dropped route would hang every request.
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    options: `-c search_path=${schema}`,
    types: TYPES,
  })
  // An idle client that loses its connection emits 'error'; without a listener that would end the process.
  pool.on('error', () => {})
  try {
    const client = await pool.connect()
    try {
      await migrate(client, schema)
    } finally {
      client.release()
    }
  } catch (error) {
    await pool.end().catch(() => {})
    throw databaseFailure(error, options.connectionString)
  }

  const failed = (error: unknown): never => {
    throw isDatabaseUnreachable(error) ? unavailable(where, error) : error
  }
  const query = async <R extends Raw = Raw>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> =>
    pool.query<R>(text, values).catch(failed)
  /** Runs `work` in one transaction on one connection. */
  const inTransaction = async <T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect().catch(failed)
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      return failed(error)
    } finally {
      client.release()
    }
  }
  const insert = (client: pg.PoolClient | pg.Pool, table: string, row: object) => {
    const names = Object.keys(row)
    return client.query(
      `INSERT INTO ${table} (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
      Object.values(row),
    )
  }
  const update = async (
    client: pg.PoolClient | null,
    table: string,
    key: string,
    value: unknown,
    change: object,
    now: number | null,
  ) => {
    const set = now === null ? change : {...change, updated_at: now}
    const names = Object.keys(set)
    if (names.length === 0) return
    const text = `UPDATE ${table} SET ${names.map((n, i) => `"${n}" = $${i + 1}`).join(', ')} WHERE ${key} = $${names.length + 1}`
    const values = [...Object.values(set), value]
    await (client ? client.query(text, values) : query(text, values))
  }

  const apiKeyRows: ApiKeyRows = {
    async insertUnder(max, row) {
      return inTransaction(async (client) => {
        // Serializes the key makers of one owner, so two at once cannot both pass the limit.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`gpunet-api-keys:${row.owner}`])
        const live = await client.query<{n: number}>(
          'SELECT count(*)::int AS n FROM api_keys WHERE owner = $1 AND revoked_at IS NULL',
          [row.owner],
        )
        if ((live.rows[0]?.n ?? 0) >= max) return false
        await insert(client, 'api_keys', row)
        return true
      })
    },
    async listLive(owner) {
      const found = await query<ApiKeySummary & Raw>(
        'SELECT id, name, created_at FROM api_keys WHERE owner = $1 AND revoked_at IS NULL ORDER BY created_at, id',
        [owner],
      )
      return found.rows
    },
    async revoke(owner, id, at) {
      const found = await query<ApiKeySummary & Raw>(
        `UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND owner = $3 AND revoked_at IS NULL
         RETURNING id, name, created_at`,
        [at, id, owner],
      )
      return found.rows[0]
    },
    async byHash(hash) {
      return (await query<ApiKeyRow & Raw>('SELECT * FROM api_keys WHERE key_sha256 = $1', [hash])).rows[0]
    },
  }

  const one = async <R>(text: string, values: unknown[]): Promise<R | undefined> =>
    (await query(text, values)).rows[0] as R | undefined

  return {
    apiKeyRows,
    where: `PostgreSQL ${where}`,
    async createDeployment(deployment, revision, vault) {
      await inTransaction(async (client) => {
        if (vault) await insert(client, 'vaults', vault)
        await insert(client, 'deployments', deployment)
        await insert(client, 'revisions', revision)
      })
    },
    async deployment(id) {
      return one<DeploymentRow>('SELECT * FROM deployments WHERE id = $1', [id])
    },
    async deployments(q: DeploymentQuery) {
      const values: unknown[] = [q.owner]
      const param = (value: unknown) => `$${values.push(value)}`
      const where = ['owner = $1']
      if (q.statuses?.length) where.push(`status = ANY(${param(q.statuses)})`)
      if (q.strategies?.length) where.push(`strategy = ANY(${param(q.strategies)})`)
      if (q.vault) where.push(`vault = ${param(q.vault)}`)
      if (q.search) {
        const search = param(q.search)
        where.push(`(strpos(lower(name), lower(${search})) > 0 OR id = ${search})`)
      }
      if (q.id) where.push(`id = ${param(q.id)}`)
      if (q.name) where.push(`name = ${param(q.name)}`)
      if (q.createdAfter !== undefined) where.push(`created_at > ${param(q.createdAfter)}`)
      if (q.createdBefore !== undefined) where.push(`created_at < ${param(q.createdBefore)}`)
      const filter = where.join(' AND ')
      const total = (await one<{n: number}>(`SELECT count(*)::int AS n FROM deployments WHERE ${filter}`, values))!.n
      const order = q.order === 'asc' ? 'ASC' : 'DESC'
      const page = [...values, q.limit, q.offset]
      const rows = await query(
        `SELECT * FROM deployments WHERE ${filter} ORDER BY created_at ${order}, id ${order}
         LIMIT $${values.length + 1} OFFSET $${values.length + 2}`,
        page,
      )
      return {rows: rows.rows as unknown as DeploymentRow[], total}
    },
    async deploymentsIn(statuses) {
      const rows = await query('SELECT * FROM deployments WHERE status = ANY($1) ORDER BY created_at', [[...statuses]])
      return rows.rows as unknown as DeploymentRow[]
    },
    async updateDeployment(id, change, now) {
      await update(null, 'deployments', 'id', id, change, now)
      const row = await one<DeploymentRow>('SELECT * FROM deployments WHERE id = $1', [id])
      if (!row) throw deploymentGone(id)
      return row
    },
    async moveDeployment(id, from, change, now) {
      const set = {...change, updated_at: now}
      const names = Object.keys(set)
      const text =
        `UPDATE deployments SET ${names.map((n, i) => `"${n}" = $${i + 1}`).join(', ')} ` +
        `WHERE id = $${names.length + 1} AND status = ANY($${names.length + 2}::text[]) RETURNING *`
      return one<DeploymentRow>(text, [...Object.values(set), id, [...from]])
    },
    async deleteDeployment(id) {
      await inTransaction(async (client) => {
        for (const table of ['revisions', 'jobs', 'tasks', 'events', 'leases'])
          await client.query(`DELETE FROM ${table} WHERE deployment = $1`, [id])
        await client.query('DELETE FROM deployments WHERE id = $1', [id])
      })
    },
    async revisions(deployment) {
      const rows = await query('SELECT * FROM revisions WHERE deployment = $1 ORDER BY revision', [deployment])
      return rows.rows as unknown as RevisionRow[]
    },
    async revision(deployment, revision) {
      return one<RevisionRow>('SELECT * FROM revisions WHERE deployment = $1 AND revision = $2', [deployment, revision])
    },
    async addRevision(revision, now) {
      await inTransaction(async (client) => {
        await insert(client, 'revisions', revision)
        await update(client, 'deployments', 'id', revision.deployment, {active_revision: revision.revision}, now)
      })
      return (await one<DeploymentRow>('SELECT * FROM deployments WHERE id = $1', [revision.deployment]))!
    },
    async jobs(deployment) {
      const rows = await query('SELECT * FROM jobs WHERE deployment = $1 ORDER BY created_at, job', [deployment])
      return rows.rows as unknown as JobRow[]
    },
    async job(address) {
      return one<JobRow>('SELECT * FROM jobs WHERE job = $1', [address])
    },
    async updateJob(address, change, now) {
      await update(null, 'jobs', 'job', address, change, now)
    },
    async tasks(deployment, options = {}) {
      const open = options.open ? ` AND status IN ('PENDING', 'PROCESSING')` : ''
      const rows = await query(`SELECT * FROM tasks WHERE deployment = $1${open} ORDER BY id`, [deployment])
      return rows.rows.map(taskOf)
    },
    async workloads(ids) {
      const found = new Map<string, Workload>()
      const list = [...ids]
      const [deployments, jobs, tasks] = await Promise.all([
        query('SELECT * FROM deployments WHERE id = ANY($1)', [list]),
        query('SELECT * FROM jobs WHERE deployment = ANY($1) ORDER BY created_at, job', [list]),
        query(`SELECT * FROM tasks WHERE deployment = ANY($1) AND status IN ('PENDING', 'PROCESSING') ORDER BY id`, [
          list,
        ]),
      ])
      for (const row of deployments.rows)
        found.set(row.id as string, {deployment: row as unknown as DeploymentRow, jobs: [], openTasks: []})
      for (const row of jobs.rows) found.get(row.deployment as string)?.jobs.push(row as unknown as JobRow)
      for (const row of tasks.rows) found.get(row.deployment as string)?.openTasks.push(taskOf(row))
      return found
    },
    async dueTasks(now) {
      const rows = await query(
        `SELECT * FROM tasks WHERE status IN ('PENDING', 'PROCESSING') AND due_at <= $1
         ORDER BY status = 'PROCESSING' DESC, due_at, id`,
        [now],
      )
      return rows.rows.map(taskOf)
    },
    async addTask(task: NewTask, now) {
      const row = newTaskRow(task, now)
      const names = Object.keys(row)
      const added = await query(
        `INSERT INTO tasks (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})
         RETURNING *`,
        Object.values(row),
      )
      return taskOf(added.rows[0]!)
    },
    async updateTask(id, change, now) {
      await update(null, 'tasks', 'id', id, change, now)
    },
    async saveInFlight(id, inFlight, now) {
      await update(
        null,
        'tasks',
        'id',
        id,
        inFlight ? {in_flight: JSON.stringify(inFlight), status: 'PROCESSING'} : {in_flight: null},
        now,
      )
    },
    async recordListed(task, job, tx, now, holder) {
      await inTransaction(async (client) => {
        if (holder !== undefined) {
          // Locks the lease till the commit: another manager can't take it over between this check and the insert.
          const held = await client.query(
            `SELECT 1 FROM leases WHERE deployment = $1 AND holder = $2 AND until > ${DB_NOW} FOR UPDATE`,
            [task.deployment, holder],
          )
          if (held.rowCount !== 1) throw leaseLost(task.deployment)
        }
        await insert(client, 'jobs', job)
        await update(client, 'tasks', 'id', task.id, listedTaskChange(task, tx), now)
      })
    },
    async events(deployment) {
      const rows = await query(
        'SELECT deployment, category, type, message, tx, created_at FROM events WHERE deployment = $1 ORDER BY id',
        [deployment],
      )
      return rows.rows as unknown as EventRow[]
    },
    async addEvent(event, now) {
      await insert(pool, 'events', {...event, created_at: now}).catch(failed)
    },
    async vault(address) {
      return one<VaultRow>('SELECT * FROM vaults WHERE vault = $1', [address])
    },
    async addVault(vault) {
      await insert(pool, 'vaults', vault).catch(failed)
    },
    async vaults(owner) {
      const rows = await query('SELECT * FROM vaults WHERE owner = $1 ORDER BY created_at', [owner])
      return rows.rows as unknown as VaultRow[]
    },
    async anyVault() {
      return one<VaultRow>('SELECT * FROM vaults ORDER BY created_at, vault LIMIT 1', [])
    },
    async claimDeployment(id, holder, forMs) {
      // The database's clock, not the manager's (`now`): see DB_NOW.
      const taken = await query(
        `INSERT INTO leases (deployment, holder, until) VALUES ($1, $2, ${DB_NOW} + $3)
         ON CONFLICT (deployment) DO UPDATE SET holder = excluded.holder, until = excluded.until
         WHERE leases.holder = excluded.holder OR leases.until <= ${DB_NOW}`,
        [id, holder, forMs],
      )
      return taken.rowCount === 1
    },
    async releaseDeployment(id, holder) {
      await query('DELETE FROM leases WHERE deployment = $1 AND holder = $2', [id, holder])
    },
    async leases() {
      const found = await query(`SELECT deployment, holder FROM leases WHERE until > ${DB_NOW} ORDER BY deployment`)
      return found.rows as {deployment: string; holder: string}[]
    },
    async writeLoad(gateway, figures) {
      await inTransaction(async (client) => {
        await client.query('DELETE FROM gateway_load WHERE gateway = $1', [gateway])
        for (const f of figures)
          await client.query(
            `INSERT INTO gateway_load (gateway, deployment, in_flight, held, at) VALUES ($1, $2, $3, $4, ${DB_NOW})`,
            [gateway, f.deployment, f.inFlight, f.held],
          )
      })
    },
    async readLoad(freshMs, except, _now, deployment) {
      // The database's clock, as for leases: the gateways' machines may not agree.
      const found = await query(
        `SELECT deployment, in_flight AS "inFlight", held FROM gateway_load
         WHERE gateway <> $1 AND at > ${DB_NOW} - $2 AND ($3::text IS NULL OR deployment = $3) ORDER BY deployment`,
        [except, freshMs, deployment ?? null],
      )
      return found.rows as unknown as GatewayFigures[]
    },
    async markDraining(job) {
      // The database's clock, as the gateways' writes are timestamped (draining.ts compares the two).
      const found = await query<{draining_at: number}>(
        `UPDATE jobs SET draining_at = COALESCE(draining_at, ${DB_NOW}) WHERE job = $1 RETURNING draining_at`,
        [job],
      )
      return found.rows[0]?.draining_at
    },
    async writeJobsInFlight(gateway, inFlight) {
      if (inFlight === null) await query('DELETE FROM gateway_jobs WHERE gateway = $1', [gateway])
      else
        await query(
          `INSERT INTO gateway_jobs (gateway, in_flight, at) VALUES ($1, $2, ${DB_NOW})
           ON CONFLICT (gateway) DO UPDATE SET in_flight = excluded.in_flight, at = excluded.at`,
          [gateway, JSON.stringify(inFlight)],
        )
    },
    async readJobsInFlight(freshMs, except) {
      const found = await query<{gateway: string; in_flight: string; at: number}>(
        `SELECT gateway, in_flight, at FROM gateway_jobs WHERE gateway <> $1 AND at > ${DB_NOW} - $2 ORDER BY gateway`,
        [except, freshMs],
      )
      return found.rows.map((r) => ({
        gateway: r.gateway,
        inFlight: JSON.parse(r.in_flight) as Record<string, number>,
        at: r.at,
      }))
    },
    async keyCheck() {
      return (await one<{value: string}>("SELECT value FROM manager_meta WHERE name = 'vault_key_check'", []))?.value
    },
    async keepKeyCheck(check) {
      await query("INSERT INTO manager_meta (name, value) VALUES ('vault_key_check', $1) ON CONFLICT DO NOTHING", [
        check,
      ])
      return (await one<{value: string}>("SELECT value FROM manager_meta WHERE name = 'vault_key_check'", []))!.value
    },
    async metricCounts(maxVaults) {
      // COUNT and SUM are bigint, which pg hands over as text: cast where they are counted.
      const [deployments, tasks, jobs, vaults, vaultTotal] = await Promise.all([
        query(
          'SELECT status, strategy, COUNT(*)::int AS count FROM deployments GROUP BY status, strategy ORDER BY status, strategy',
        ),
        query(
          'SELECT task, status, COUNT(*)::int AS count, SUM(attempts)::int AS failures FROM tasks GROUP BY task, status ORDER BY task, status',
        ),
        query('SELECT state, COUNT(*)::int AS count FROM jobs GROUP BY state ORDER BY state'),
        query('SELECT vault FROM vaults ORDER BY created_at, vault LIMIT $1', [maxVaults]),
        one<{count: number}>('SELECT COUNT(*)::int AS count FROM vaults', []),
      ])
      return {
        deployments: deployments.rows as unknown as MetricCounts['deployments'],
        tasks: tasks.rows as unknown as MetricCounts['tasks'],
        jobs: jobs.rows as unknown as MetricCounts['jobs'],
        vaults: vaults.rows.map((row) => row.vault as string),
        vaultTotal: vaultTotal?.count ?? 0,
      }
    },
    async close() {
      await pool.end()
    },
  }
}
