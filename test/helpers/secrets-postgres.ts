/** The secrets service's PostgreSQL storage under test: a schema of its own in the test database each time. */
import {randomBytes} from 'node:crypto'

import pg from 'pg'

import {openPostgresStorage} from '../../src/lib/secrets/service/postgres.js'
import {DATABASE_URL_ENV} from '../support/env.js'
import {type Adapter, tempDir} from './secrets.js'

export const postgresAdapter: Adapter = {
  name: 'PostgreSQL',
  unavailable: () => (process.env[DATABASE_URL_ENV] ? undefined : `${DATABASE_URL_ENV} is not set`),
  async open() {
    const {dir, remove} = await tempDir()
    const connectionString = process.env[DATABASE_URL_ENV] as string
    // One schema per store keeps suites independent in one database.
    const schema = `gpunet_test_${randomBytes(6).toString('hex')}`
    const storage = await openPostgresStorage({connectionString, schema})
    const cleanup = async () => {
      await dropSchema(connectionString, schema)
      await remove()
    }
    return {storage, cleanup, databaseUrl: connectionString, dataDir: dir}
  },
}

async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const client = new pg.Client({connectionString})
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await client.end()
}
