import type Database from 'better-sqlite3'
import {chmodSync, closeSync, openSync} from 'node:fs'
import {createRequire} from 'node:module'

// better-sqlite3 12 (node::ObjectWrap) built for Node 24 aborts the process whenever V8 collects one of its
// objects without a JavaScript context (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook):
// at exit, and during a run from a background GC, even with every object kept referenced. better-sqlite3 13
// (Node-API, the same JavaScript API) has no such path but crashes on load on Node 20. So Node 22 and later load
// 13 (the dependency `better-sqlite3-13`, prebuilt, nothing compiled) and Node 20 loads 12 (built from source by
// `npm ci`). The linter lets only this module construct a database, so every caller gets the right one.
const driverName = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-13' : 'better-sqlite3'
let driver: typeof Database | undefined

/** Opens a SQLite file (or ':memory:') with the driver this Node can run (see above). */
export function openSqlite(file: string, options?: Database.Options): Database.Database {
  driver ??= createRequire(import.meta.url)(driverName) as typeof Database
  return new driver(file, options)
}

/** The package that `openSqlite` loads on this Node (for `localnet doctor`-style reports and tests). */
export function sqliteDriverName(): string {
  return driverName
}

/** Creates the database file 0600 (or makes an existing one so) before SQLite opens it, whatever the umask. */
export function keepPrivate(file: string): void {
  closeSync(openSync(file, 'a', 0o600))
  chmodSync(file, 0o600)
}
