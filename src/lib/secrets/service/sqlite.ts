import Database from 'better-sqlite3'
import {mkdirSync} from 'node:fs'
import {dirname} from 'node:path'

import {OwnerLimitError, type SealedSecret, type SecretStorage} from './storage.js'

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS secrets (
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    sealed BLOB NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (owner, name)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS used_signatures (
    signature TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS used_signatures_expiry ON used_signatures (expires_at);
`

/** The embedded storage: one SQLite file in WAL mode, synchronous=FULL so an answered write survives a crash. */
export function openSqliteStorage(file: string): SecretStorage {
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('busy_timeout = 5000')
  db.exec(SCHEMA)

  const listAll = db.prepare<[string], SealedSecret>('SELECT name, sealed FROM secrets WHERE owner = ? ORDER BY name')
  const upsert = db.prepare(
    `INSERT INTO secrets (owner, name, sealed, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (owner, name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
  )
  const count = db.prepare<[string], {n: number}>('SELECT count(*) AS n FROM secrets WHERE owner = ?')
  const remove = db.prepare('DELETE FROM secrets WHERE owner = ? AND name = ?')
  const forget = db.prepare('DELETE FROM used_signatures WHERE expires_at < ?')
  const claim = db.prepare('INSERT INTO used_signatures (signature, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING')

  const put = db.transaction((owner: string, secrets: readonly SealedSecret[], maxPerOwner: number) => {
    const now = Date.now()
    for (const s of secrets) upsert.run(owner, s.name, s.sealed, now)
    // Throwing inside the transaction rolls every upsert of this request back.
    if ((count.get(owner)?.n ?? 0) > maxPerOwner) throw new OwnerLimitError(maxPerOwner)
  })
  const claimOnce = db.transaction((signature: string, expiresAt: number, now: number) => {
    forget.run(now)
    return claim.run(signature, expiresAt).changes === 1
  })

  return {
    async list(owner, names) {
      const all = listAll.all(owner)
      return names ? all.filter((s) => names.includes(s.name)) : all
    },
    async put(owner, secrets, maxPerOwner) {
      put(owner, secrets, maxPerOwner)
    },
    async delete(owner, name) {
      return remove.run(owner, name).changes === 1
    },
    async claimSignature(signature, expiresAt, now) {
      return claimOnce(signature, expiresAt, now)
    },
    async ping() {
      db.prepare('SELECT 1').get()
    },
    async close() {
      db.close()
    },
  }
}
