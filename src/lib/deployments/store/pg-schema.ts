/**
 * The deployment store's whole PostgreSQL schema, as numbered migrations. Managers sharing one database may start
 * together: the migrations run under an advisory lock, each once, recorded in `schema_version`. The SQLite store's
 * tables are SQLITE_SCHEMA (sqlite-store.ts); store-contract.test.ts fails when the two have different columns.
 */
import type pg from 'pg'

/** Times are unix ms (BIGINT, read as numbers: see pg-store.ts), as in the SQLite store. */
export const PG_MIGRATIONS: readonly string[] = [
  `CREATE TABLE deployments (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     owner TEXT NOT NULL,
     vault TEXT NOT NULL,
     market TEXT NOT NULL,
     status TEXT NOT NULL,
     replicas INTEGER NOT NULL,
     timeout INTEGER NOT NULL,
     strategy TEXT NOT NULL,
     time_scale DOUBLE PRECISION NOT NULL,
     confidential BOOLEAN NOT NULL,
     active_revision INTEGER NOT NULL,
     started_at BIGINT,
     schedule TEXT,
     rotation_time INTEGER,
     startup_timeout INTEGER,
     throttle_rounds INTEGER NOT NULL DEFAULT 0,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE INDEX deployments_owner ON deployments (owner, created_at);
   CREATE INDEX deployments_status ON deployments (status);
   CREATE TABLE revisions (
     deployment TEXT NOT NULL,
     revision INTEGER NOT NULL,
     ipfs_definition_hash TEXT NOT NULL,
     job_definition TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     PRIMARY KEY (deployment, revision)
   );
   CREATE TABLE jobs (
     job TEXT PRIMARY KEY,
     deployment TEXT NOT NULL,
     tx TEXT NOT NULL,
     market TEXT NOT NULL,
     revision INTEGER NOT NULL,
     run TEXT NOT NULL,
     state TEXT NOT NULL,
     time_start BIGINT NOT NULL,
     chain_timeout BIGINT NOT NULL,
     time_end BIGINT NOT NULL DEFAULT 0,
     stop_requested BOOLEAN NOT NULL,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE INDEX jobs_deployment ON jobs (deployment, created_at);
   CREATE TABLE tasks (
     id BIGSERIAL PRIMARY KEY,
     deployment TEXT NOT NULL,
     task TEXT NOT NULL,
     status TEXT NOT NULL,
     job TEXT,
     "limit" INTEGER,
     revision INTEGER NOT NULL,
     attempts INTEGER NOT NULL,
     due_at BIGINT NOT NULL,
     in_flight TEXT,
     tx TEXT,
     error TEXT,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE INDEX tasks_open ON tasks (status, due_at);
   CREATE INDEX tasks_deployment ON tasks (deployment, id);
   CREATE TABLE events (
     id BIGSERIAL PRIMARY KEY,
     deployment TEXT NOT NULL,
     category TEXT NOT NULL,
     type TEXT NOT NULL,
     message TEXT NOT NULL,
     tx TEXT,
     created_at BIGINT NOT NULL
   );
   CREATE INDEX events_deployment ON events (deployment, id);
   CREATE TABLE vaults (
     vault TEXT PRIMARY KEY,
     owner TEXT NOT NULL,
     sealed BYTEA NOT NULL,
     created_at BIGINT NOT NULL
   );
   CREATE INDEX vaults_owner ON vaults (owner, created_at);
   CREATE TABLE leases (
     deployment TEXT PRIMARY KEY,
     holder TEXT NOT NULL,
     until BIGINT NOT NULL
   );
   CREATE TABLE manager_meta (
     name TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     owner TEXT NOT NULL,
     name TEXT,
     key_sha256 BYTEA NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );
   CREATE INDEX api_keys_owner ON api_keys (owner);`,
  // 2: the last state of a job's deployment proxies (tunnel-watch.ts).
  `ALTER TABLE jobs ADD COLUMN tunnel TEXT`,
  // 3: a move between markets under way, and the queue timeout that starts one (manager/move.ts).
  `ALTER TABLE deployments ADD COLUMN move_from TEXT;
   ALTER TABLE deployments ADD COLUMN move_began BIGINT;
   ALTER TABLE deployments ADD COLUMN queue_placement TEXT`,
  // 4: autoscaling's policy, its scale-down window's start, and the budget (autoscale/policy.ts, paying/budget.ts).
  `ALTER TABLE deployments
     ADD COLUMN min_replicas INTEGER,
     ADD COLUMN max_replicas INTEGER,
     ADD COLUMN target_concurrency DOUBLE PRECISION,
     ADD COLUMN scale_down_after INTEGER,
     ADD COLUMN calm_since BIGINT,
     ADD COLUMN budget BIGINT`,
  // 5: each gateway's traffic per deployment, for the manager holding its lease (autoscale/store-load.ts).
  `CREATE TABLE gateway_load (
     gateway TEXT NOT NULL,
     deployment TEXT NOT NULL,
     in_flight INTEGER NOT NULL,
     held INTEGER NOT NULL,
     at BIGINT NOT NULL,
     PRIMARY KEY (gateway, deployment)
   );
   CREATE INDEX gateway_load_deployment ON gateway_load (deployment, at);`,
  // 6: draining through the store: a job's drain mark, and each gateway's requests in flight per job (draining.ts).
  `ALTER TABLE jobs ADD COLUMN draining_at BIGINT;
   CREATE TABLE gateway_jobs (
     gateway TEXT PRIMARY KEY,
     in_flight TEXT NOT NULL,
     at BIGINT NOT NULL
   );`,
  // 7: a job's own price on chain, decimal text (a u64: BIGINT is signed), which budget.ts counts its spend at; a
  // row stored before has none (NULL) and is counted at the market's price.
  `ALTER TABLE jobs ADD COLUMN chain_price TEXT`,
]

/**
 * Brings the schema to the latest version in one transaction, under the advisory lock: a second starter waits, then
 * finds every migration applied. Answers the migrations this call ran (0 when another starter had run them).
 */
export async function migrate(client: pg.PoolClient, schema: string): Promise<number> {
  await client.query('BEGIN')
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('gpunet-deployments-schema'))")
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    await client.query(`SET LOCAL search_path = ${schema}`)
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
    )
    const found = await client.query<{v: number | null}>('SELECT max(version) AS v FROM schema_version')
    const current = found.rows[0]?.v ?? 0
    if (current > PG_MIGRATIONS.length) {
      throw new Error(
        `the database's deployment schema is version ${current}, newer than this gpunet knows (${PG_MIGRATIONS.length}): upgrade gpunet`,
      )
    }
    for (let version = current + 1; version <= PG_MIGRATIONS.length; version++) {
      await client.query(PG_MIGRATIONS[version - 1]!)
      await client.query('INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)', [version, Date.now()])
    }
    await client.query('COMMIT')
    return PG_MIGRATIONS.length - current
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}
