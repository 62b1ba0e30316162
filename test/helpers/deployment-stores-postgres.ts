/** The deployment store on PostgreSQL under test: a fresh schema of the test database each time. */
import {randomBytes} from 'node:crypto'

import pg from 'pg'

import {openPgDeploymentStore} from '../../src/lib/deployments/store/pg-store.js'
import type {DeploymentStore} from '../../src/lib/deployments/store/store.js'
import {DATABASE_URL_ENV} from '../support/env.js'
import type {StoreAdapter} from './deployment-stores.js'

/** A schema name of its own for one test. */
export function freshSchema(): string {
  return `gpunet_deploy_${randomBytes(6).toString('hex')}`
}

/** Drops a test's schema. */
export async function dropSchema(connectionString: string, schema: string): Promise<void> {
  const client = new pg.Client({connectionString})
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await client.end()
}

export const pgStores: StoreAdapter = {
  name: 'PostgreSQL',
  unavailable: () => (process.env[DATABASE_URL_ENV] ? undefined : `${DATABASE_URL_ENV} is not set`),
  async open() {
    const connectionString = process.env[DATABASE_URL_ENV] as string
    const schema = freshSchema()
    const opened: DeploymentStore[] = [await openPgDeploymentStore({connectionString, schema})]
    return {
      store: opened[0]!,
      async reopen() {
        opened.push(await openPgDeploymentStore({connectionString, schema}))
        return opened.at(-1)!
      },
      async passTime(ms) {
        const client = new pg.Client({connectionString})
        await client.connect()
        await client.query(`UPDATE ${schema}.leases SET until = until - $1`, [ms])
        await client.end()
      },
      async cleanup() {
        for (const store of opened) await store.close().catch(() => {})
        await dropSchema(connectionString, schema)
      },
    }
  },
}

/** A fresh database on the test PostgreSQL; answers its URL and its removal. */
export async function freshDatabase(): Promise<{url: string; drop: () => Promise<void>}> {
  const admin = process.env[DATABASE_URL_ENV] as string
  const name = `gpunet_managers_${randomBytes(5).toString('hex')}`
  const client = new pg.Client({connectionString: admin})
  await client.connect()
  await client.query(`CREATE DATABASE ${name}`)
  await client.end()
  const url = new URL(admin)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const again = new pg.Client({connectionString: admin})
      await again.connect()
      await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await again.end()
    },
  }
}
