/** The deployment stores under test: a fresh SQLite file, or a fresh schema of the test PostgreSQL, each time. */
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'

import pg from 'pg'

import {openPgDeploymentStore} from '../../src/lib/deployments/pg-store.js'
import {openSqliteDeploymentStore} from '../../src/lib/deployments/sqlite-store.js'
import type {DeploymentStore} from '../../src/lib/deployments/store.js'
import {DATABASE_URL_ENV, tempDir} from './secrets.js'

export interface OpenedStore {
  store: DeploymentStore
  /** Opens the same database again (another manager's view of it). */
  reopen(): Promise<DeploymentStore>
  cleanup(): Promise<void>
}

export interface StoreAdapter {
  name: 'SQLite' | 'PostgreSQL'
  /** Why it cannot run here, or undefined. */
  unavailable(): string | undefined
  open(): Promise<OpenedStore>
}

export const sqliteStores: StoreAdapter = {
  name: 'SQLite',
  unavailable: () => undefined,
  async open() {
    const {dir, remove} = await tempDir()
    const file = join(dir, 'deployments.db')
    const opened: DeploymentStore[] = [openSqliteDeploymentStore(file)]
    return {
      store: opened[0]!,
      async reopen() {
        opened.push(openSqliteDeploymentStore(file))
        return opened.at(-1)!
      },
      async cleanup() {
        for (const store of opened) await store.close().catch(() => {})
        await remove()
      },
    }
  },
}

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
      async cleanup() {
        for (const store of opened) await store.close().catch(() => {})
        await dropSchema(connectionString, schema)
      },
    }
  },
}

/**
 * Declares `suite` for each store. Without a PostgreSQL URL the PostgreSQL suite fails under CI=true and is skipped
 * elsewhere, with a notice naming the variable (as the secrets service's suites do).
 */
export function forEachStore(title: string, suite: (adapter: StoreAdapter) => void): void {
  for (const adapter of [sqliteStores, pgStores]) {
    const reason = adapter.unavailable()
    if (reason && process.env.CI !== 'true') {
      process.stderr.write(`\n!!! SKIPPING ${title} on ${adapter.name}: ${reason}.\n`)
      describe.skip(`${title} (${adapter.name})`, () => suite(adapter))
      continue
    }
    describe(`${title} (${adapter.name})`, () => {
      if (reason) {
        it(`needs ${DATABASE_URL_ENV}`, () => {
          throw new Error(`${reason}: CI=true requires the PostgreSQL suites to run`)
        })
        return
      }
      suite(adapter)
    })
  }
}
