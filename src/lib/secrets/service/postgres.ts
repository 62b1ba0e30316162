import pg from 'pg'

import {OwnerLimitError, type SealedSecret, type SecretStorage} from './storage.js'

export interface PostgresStorageOptions {
  connectionString: string
  /** A schema of its own (created if missing), e.g. one per test run; default `public`. */
  schema?: string
  maxConnections?: number
}

/** The shared storage: several service instances on one PostgreSQL database. */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<SecretStorage> {
  const schema = options.schema ?? 'public'
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid PostgreSQL schema name: ${schema}`)
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    options: `-c search_path=${schema}`,
  })
  // An idle client that loses its connection emits 'error'; without a listener that would end the process.
  pool.on('error', () => {})
  await withClient(pool, async (client) => {
    // Instances starting together would race on CREATE ... IF NOT EXISTS; one lock makes it sequential.
    await client.query('BEGIN')
    await client.query("SELECT pg_advisory_xact_lock(hashtext('gpunet-secrets-schema'))")
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    await client.query(`CREATE TABLE IF NOT EXISTS secrets (
      owner TEXT NOT NULL, name TEXT NOT NULL, sealed BYTEA NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (owner, name))`)
    await client.query(
      `CREATE TABLE IF NOT EXISTS used_signatures (signature TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)`,
    )
    await client.query('CREATE INDEX IF NOT EXISTS used_signatures_expiry ON used_signatures (expires_at)')
    await client.query('COMMIT')
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
    async put(owner, secrets, maxPerOwner) {
      await withClient(pool, async (client) => {
        try {
          await client.query('BEGIN')
          // Serializes writers of one owner, so two concurrent requests cannot both pass the count check.
          await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [owner])
          await client.query(
            `INSERT INTO secrets (owner, name, sealed) SELECT $1, n, s FROM unnest($2::text[], $3::bytea[]) AS t(n, s)
             ON CONFLICT (owner, name) DO UPDATE SET sealed = excluded.sealed, updated_at = now()`,
            [owner, secrets.map((s) => s.name), secrets.map((s) => s.sealed)],
          )
          const {rows} = await client.query<{n: number}>('SELECT count(*)::int AS n FROM secrets WHERE owner = $1', [
            owner,
          ])
          if ((rows[0]?.n ?? 0) > maxPerOwner) throw new OwnerLimitError(maxPerOwner)
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK')
          throw error
        }
      })
    },
    async delete(owner, name) {
      const result = await pool.query('DELETE FROM secrets WHERE owner = $1 AND name = $2', [owner, name])
      return result.rowCount === 1
    },
    async claimSignature(signature, expiresAt, now) {
      await pool.query('DELETE FROM used_signatures WHERE expires_at < $1', [now])
      const result = await pool.query(
        'INSERT INTO used_signatures (signature, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [signature, expiresAt],
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

async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  try {
    return await work(client)
  } finally {
    client.release()
  }
}
