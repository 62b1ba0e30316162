import pg from 'pg'

import {checkQuota, type SealedSecret, type SecretStorage} from './storage.js'

const SIZE = 'octet_length(name) + octet_length(sealed)'

export interface PostgresStorageOptions {
  connectionString: string
  /** A schema of its own (created if missing), e.g. one per test run; default `public`. */
  schema?: string
  maxConnections?: number
  /** How long opening a connection may take (default 10 s, the HTTP client's connect timeout). */
  connectTimeoutMs?: number
}

/** The shared storage: several service instances on one PostgreSQL database. */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<SecretStorage> {
  const schema = options.schema ?? 'public'
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`)
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    // pg waits forever by default: a database behind a dropped route would hang the service's start.
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    options: `-c search_path=${schema}`,
  })
  // An idle client that loses its connection emits 'error'; without a listener that would end the process.
  pool.on('error', () => {})
  await withClient(pool, async (client) => {
    await client.query('BEGIN')
    await createSchema(client, schema)
    await client.query('COMMIT')
  }).catch(async (error: unknown) => {
    // A storage that could not be set up serves nothing: its pool is closed with it, and with the pool the
    // connection left inside the failed transaction (whose work PostgreSQL then rolls back).
    await pool.end().catch(() => {})
    throw error
  })

  return {
    async list(owner, names) {
      const result = names
        ? await pool.query<SealedSecret>(
            'SELECT name, sealed FROM secrets WHERE owner = $1 AND name = ANY($2) ORDER BY name',
            [owner, names],
          )
        : await pool.query<SealedSecret>('SELECT name, sealed FROM secrets WHERE owner = $1 ORDER BY name', [owner])
      return result.rows
    },
    async put(owner, secrets, quota) {
      await withClient(pool, async (client) => {
        try {
          await client.query('BEGIN')
          // Serializes writers of one owner, so two concurrent requests cannot both pass the owner's quota.
          await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [owner])
          const names = secrets.map((s) => s.name)
          const replaced = await client.query<{n: number}>(
            `SELECT coalesce(sum(${SIZE}), 0)::bigint AS n FROM secrets WHERE owner = $1 AND name = ANY($2)`,
            [owner, names],
          )
          const growth =
            secrets.reduce((sum, s) => sum + s.name.length + s.sealed.length, 0) - Number(replaced.rows[0]?.n ?? 0)
          await client.query(
            `INSERT INTO secrets (owner, name, sealed) SELECT $1, n, s FROM unnest($2::text[], $3::bytea[]) AS t(n, s)
             ON CONFLICT (owner, name) DO UPDATE SET sealed = excluded.sealed, updated_at = now()`,
            [owner, names, secrets.map((s) => s.sealed)],
          )
          const usage = await client.query<{secrets: number; bytes: string}>(
            `SELECT count(*)::int AS secrets, coalesce(sum(${SIZE}), 0)::bigint AS bytes FROM secrets WHERE owner = $1`,
            [owner],
          )
          // The row lock on the total serializes writers of all owners for the rest of this transaction.
          const total = await client.query<{bytes: string}>(
            'UPDATE usage_total SET bytes = bytes + $1 WHERE id = 1 RETURNING bytes',
            [growth],
          )
          checkQuota(
            quota,
            {secrets: usage.rows[0]?.secrets ?? 0, bytes: Number(usage.rows[0]?.bytes ?? 0)},
            {before: Number(total.rows[0]?.bytes ?? 0) - growth, growth},
          )
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK')
          throw error
        }
      })
    },
    async delete(owner, name) {
      const result = await pool.query<{removed: number}>(
        `WITH removed AS (DELETE FROM secrets WHERE owner = $1 AND name = $2 RETURNING ${SIZE} AS n)
         UPDATE usage_total SET bytes = bytes - (SELECT coalesce(sum(n), 0) FROM removed) WHERE id = 1
         RETURNING (SELECT count(*) FROM removed)::int AS removed`,
        [owner, name],
      )
      return result.rows[0]?.removed === 1
    },
    async claimSignature(signature, signedAt, now, keepSeconds) {
      await pool.query('DELETE FROM used_signatures WHERE expires_at < $1', [now])
      const result = await pool.query(
        'INSERT INTO used_signatures (signature, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [signature, signedAt + keepSeconds],
      )
      return result.rowCount === 1
    },
    async ping() {
      await pool.query('SELECT 1')
    },
    async close() {
      await pool.end()
    },
  }
}

/** Creates the tables, in the caller's transaction, under a lock so that instances starting together wait in turn. */
async function createSchema(client: pg.PoolClient, schema: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext('gpunet-secrets-schema'))")
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
  await client.query(`CREATE TABLE IF NOT EXISTS secrets (
    owner TEXT NOT NULL, name TEXT NOT NULL, sealed BYTEA NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, name))`)
  await client.query(
    `CREATE TABLE IF NOT EXISTS used_signatures (signature TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)`,
  )
  await client.query('CREATE INDEX IF NOT EXISTS used_signatures_expiry ON used_signatures (expires_at)')
  await client.query(
    'CREATE TABLE IF NOT EXISTS usage_total (id INT PRIMARY KEY CHECK (id = 1), bytes BIGINT NOT NULL)',
  )
  await client.query(
    `INSERT INTO usage_total (id, bytes) SELECT 1, coalesce(sum(${SIZE}), 0) FROM secrets ON CONFLICT DO NOTHING`,
  )
}

async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  try {
    return await work(client)
  } finally {
    client.release()
  }
}
