/**
 * The deployment store's contract on PostgreSQL, then what only PostgreSQL has: migrations run once by concurrent
 * starters, and the two schemas' columns compared, so they cannot drift apart unnoticed.
 */
import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import pg from 'pg'

import {createApiKeys} from '../../../src/lib/deployments/store/api-keys.js'
import {openPgDeploymentStore} from '../../../src/lib/deployments/store/pg-store.js'
import {PG_MIGRATIONS} from '../../../src/lib/deployments/store/pg-schema.js'
import {SQLITE_SCHEMA} from '../../../src/lib/deployments/store/sqlite-store.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {dropSchema, freshSchema, pgStores} from '../../helpers/deployment-stores-postgres.js'
import {tempDir} from '../../helpers/secrets.js'
import {DATABASE_URL_ENV} from '../../support/env.js'
import {storeContractSuites} from './store-contract-suites.js'

storeContractSuites([pgStores])

describe('deployment store on PostgreSQL: migrations and schema', function () {
  let url: string | undefined
  before(function () {
    if (pgStores.unavailable() && process.env.CI !== 'true') this.skip()
    url = process.env[DATABASE_URL_ENV]
  })

  it('runs each migration once when managers start together', async () => {
    const schema = freshSchema()
    const stores = await Promise.all(
      Array.from({length: 6}, () => openPgDeploymentStore({connectionString: url!, schema})),
    )
    try {
      const client = new pg.Client({connectionString: url})
      await client.connect()
      const versions = await client.query(`SELECT version FROM ${schema}.schema_version ORDER BY version`)
      await client.end()
      assert.deepEqual(
        versions.rows.map((r: {version: number}) => r.version),
        PG_MIGRATIONS.map((_, i) => i + 1),
      )
    } finally {
      for (const store of stores) await store.close()
      await dropSchema(url!, schema)
    }
  })

  it("adds draining's column and table to a database made before them, every row kept", async () => {
    const schema = freshSchema()
    const client = new pg.Client({connectionString: url})
    await client.connect()
    try {
      // The schema as the five migrations before draining went through the store left it, with a job and its load.
      await client.query(`CREATE SCHEMA ${schema}`)
      await client.query(`SET search_path = ${schema}`)
      await client.query('CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)')
      for (let version = 1; version <= 5; version++) {
        await client.query(PG_MIGRATIONS[version - 1]!)
        await client.query('INSERT INTO schema_version VALUES ($1, 0)', [version])
      }
      await client.query(
        `INSERT INTO jobs (job, deployment, tx, market, revision, run, state, time_start, chain_timeout, stop_requested,
           tunnel, created_at, updated_at) VALUES ('j1', 'd1', 'tx', 'm', 1, 'r', 'RUNNING', 100, 600, false, 'up', 1, 2)`,
      )
      await client.query(`INSERT INTO gateway_load VALUES ('g', 'd1', 2, 0, 5)`)
      const store = await openPgDeploymentStore({connectionString: url!, schema})
      try {
        const job = await store.job('j1')
        assert.deepEqual([job?.state, job?.tunnel, job?.chain_timeout, job?.draining_at], ['RUNNING', 'up', 600, null])
        const load = await client.query('SELECT gateway, deployment, in_flight FROM gateway_load')
        assert.deepEqual(load.rows, [{gateway: 'g', deployment: 'd1', in_flight: 2}])
        assert.equal(typeof (await store.markDraining('j1', 0)), 'number')
        await store.writeJobsInFlight('g', {j1: 1}, 0)
        assert.deepEqual(
          (await store.readJobsInFlight(60_000, 'other', 0)).map((f) => f.inFlight),
          [{j1: 1}],
        )
      } finally {
        await store.close()
      }
    } finally {
      await client.end()
      await dropSchema(url!, schema)
    }
  })

  it('has the same tables and columns as the SQLite store', async () => {
    const schema = freshSchema()
    const store = await openPgDeploymentStore({connectionString: url!, schema})
    const {dir, remove} = await tempDir()
    try {
      const client = new pg.Client({connectionString: url})
      await client.connect()
      const found = await client.query<{table_name: string; column_name: string}>(
        `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name <> 'schema_version'`,
        [schema],
      )
      await client.end()
      const pgColumns = found.rows.map((r) => `${r.table_name}.${r.column_name}`).sort()
      const db = openSqlite(join(dir, 'x.db'))
      db.exec(SQLITE_SCHEMA)
      createApiKeys((await import('../../../src/lib/deployments/store/api-keys.js')).sqliteApiKeyRows(db))
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .all() as {name: string}[]
      const sqliteColumns = tables
        .flatMap(({name}) =>
          (db.prepare(`PRAGMA table_info(${name})`).all() as {name: string}[]).map((c) => `${name}.${c.name}`),
        )
        .sort()
      db.close()
      assert.deepEqual(pgColumns, sqliteColumns)
    } finally {
      await store.close()
      await dropSchema(url!, schema)
      await remove()
    }
  })
})
