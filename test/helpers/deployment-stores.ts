/** The deployment stores under test: a fresh SQLite file each time (PostgreSQL's: deployment-stores-postgres.ts). */
import {join} from 'node:path'

import {openSqliteDeploymentStore} from '../../src/lib/deployments/store/sqlite-store.js'
import type {DeploymentStore} from '../../src/lib/deployments/store/store.js'
import {DATABASE_URL_ENV} from '../support/env.js'
import {tempDir} from './secrets.js'

export interface OpenedStore {
  store: DeploymentStore
  /** Opens the same database again (another manager's view of it). */
  reopen(): Promise<DeploymentStore>
  /**
   * Lets `ms` pass on the store's lease clock. SQLite's is the manager's (the `now` a test passes: nothing to do);
   * PostgreSQL's is the database's, so every lease deadline is moved back by `ms` instead.
   */
  passTime(ms: number): Promise<void>
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
      async passTime() {},
      async cleanup() {
        for (const store of opened) await store.close().catch(() => {})
        await remove()
      },
    }
  },
}

/**
 * Declares `suite` for each store. Without a PostgreSQL URL the PostgreSQL suite fails under CI=true and is skipped
 * elsewhere, with a notice naming the variable (as the secrets service's suites do).
 */
export function forEachStore(title: string, suite: (adapter: StoreAdapter) => void, adapters: StoreAdapter[]): void {
  for (const adapter of adapters) {
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
