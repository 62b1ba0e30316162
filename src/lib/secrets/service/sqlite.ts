import Database from 'better-sqlite3'
import {chmodSync, closeSync, existsSync, mkdirSync, openSync} from 'node:fs'
import {dirname} from 'node:path'

import {checkQuota, type Quota, type SealedSecret, type SecretStorage} from './storage.js'

// better-sqlite3 12 built for Node 24 aborts the process when V8 collects one of its objects outside a JavaScript
// context: Node 24's ObjectWrap destructor removes an environment cleanup hook and asserts on a missing Environment
// (fixed only in better-sqlite3 13, which needs Node 22). So every database and statement is kept for the life of
// the process, and nothing prepares throwaway statements (`pragma()` does: settings go through `exec`). A storage
// prepares a fixed set once, so this holds a few objects per file opened.
const keptForLife = new Set<object>()

/** Opens the database with every statement it prepares kept alive (see `keptForLife`). */
function openKept(file: string): Database.Database {
  const db = new Database(file)
  keptForLife.add(db)
  const prepare = db.prepare.bind(db)
  db.prepare = ((source: string) => {
    const statement = prepare(source)
    keptForLife.add(statement)
    return statement
  }) as typeof db.prepare
  return db
}

const SIZE = 'length(CAST(name AS BLOB)) + length(sealed)'

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS secrets (
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    sealed BLOB NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (owner, name)
  ) WITHOUT ROWID;
  -- In time order, so recording and forgetting touch the few pages at either end, not pages all over the tree.
  -- The signature is made over the timestamp, so (signed_at, signature) is as unique as the signature.
  CREATE TABLE IF NOT EXISTS login_signatures (
    signed_at INTEGER NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (signed_at, signature)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS usage_total (id INTEGER PRIMARY KEY CHECK (id = 1), bytes INTEGER NOT NULL);
  INSERT OR IGNORE INTO usage_total (id, bytes) SELECT 1, coalesce(sum(${SIZE}), 0) FROM secrets;
`

/**
 * The embedded storage: one SQLite file in WAL mode, synchronous=FULL so an answered write of secrets survives a
 * crash of the machine. Writes that arrive together are committed together (group commit): each in a savepoint
 * of its own, so one refused write changes nothing and does not fail the others, and one fsync makes the whole
 * group durable. A group of login records alone is committed without waiting for the disk (synchronous=NORMAL):
 * it survives a crash of the service, and only a crash of the machine within the two minutes a signature is
 * valid could forget one.
 */
export function openSqliteStorage(file: string): SecretStorage {
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  keepPrivate(file)
  const db = openKept(file)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000')
  db.exec(SCHEMA)
  migrateUsedSignatures(db)
  // SQLite gives -wal and -shm the database file's mode; these may predate that file's chmod.
  for (const suffix of ['-wal', '-shm']) if (existsSync(`${file}${suffix}`)) chmodSync(`${file}${suffix}`, 0o600)

  const listAll = db.prepare<[string], SealedSecret>('SELECT name, sealed FROM secrets WHERE owner = ? ORDER BY name')
  const sizeOf = db.prepare<[string, string], {n: number}>(
    `SELECT ${SIZE} AS n FROM secrets WHERE owner = ? AND name = ?`,
  )
  const upsert = db.prepare(
    `INSERT INTO secrets (owner, name, sealed, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (owner, name) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
  )
  const usage = db.prepare<[string], {secrets: number; bytes: number}>(
    `SELECT count(*) AS secrets, coalesce(sum(${SIZE}), 0) AS bytes FROM secrets WHERE owner = ?`,
  )
  const total = db.prepare<[], {bytes: number}>('SELECT bytes FROM usage_total WHERE id = 1')
  const addTotal = db.prepare('UPDATE usage_total SET bytes = bytes + ? WHERE id = 1')
  const remove = db.prepare<[string, string], {n: number}>(
    `DELETE FROM secrets WHERE owner = ? AND name = ? RETURNING ${SIZE} AS n`,
  )
  const forget = db.prepare('DELETE FROM login_signatures WHERE signed_at < ?')
  const claim = db.prepare('INSERT INTO login_signatures (signed_at, signature) VALUES (?, ?) ON CONFLICT DO NOTHING')
  const select1 = db.prepare('SELECT 1')

  // Nested in the batch's transaction, each of these is a savepoint: a throw rolls back that write alone.
  const putOne = db.transaction((owner: string, secrets: readonly SealedSecret[], quota: Quota) => {
    const now = Date.now()
    let growth = 0
    for (const s of secrets) {
      growth += s.name.length + s.sealed.length - (sizeOf.get(owner, s.name)?.n ?? 0)
      upsert.run(owner, s.name, s.sealed, now)
    }
    checkQuota(quota, usage.get(owner) as {secrets: number; bytes: number}, {
      before: total.get()?.bytes ?? 0,
      growth,
    })
    addTotal.run(growth)
  })
  const deleteOne = db.transaction((owner: string, name: string) => {
    const removed = remove.get(owner, name)
    if (removed) addTotal.run(-removed.n)
    return removed !== undefined
  })
  let forgotAt = 0
  const claimOne = db.transaction((signature: string, signedAt: number, now: number, keepSeconds: number) => {
    if (now !== forgotAt) {
      forget.run(now - keepSeconds)
      forgotAt = now
    }
    return claim.run(signedAt, signature).changes === 1
  })

  const writes = new GroupCommit(db)
  const reads = new ListCache(db)
  return {
    async list(owner, names) {
      const all = reads.get(owner, () => listAll.all(owner))
      return names ? all.filter((s) => names.includes(s.name)) : all
    },
    put: (owner, secrets, quota) => writes.run(() => reads.changed(owner, () => putOne(owner, secrets, quota)), true),
    delete: (owner, name) => writes.run(() => reads.changed(owner, () => deleteOne(owner, name)), true),
    claimSignature: (signature, signedAt, now, keepSeconds) =>
      writes.run(() => claimOne(signature, signedAt, now, keepSeconds), false),
    async ping() {
      select1.get()
    },
    async close() {
      writes.flush()
      db.close()
    },
  }
}

/** Moves the signatures of the first table layout (kept by expiry, 61 s after signing) to the time-ordered one. */
function migrateUsedSignatures(db: Database.Database): void {
  const old = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'used_signatures'").get()
  if (!old) return
  db.transaction(() => {
    db.exec(`INSERT OR IGNORE INTO login_signatures (signed_at, signature)
             SELECT expires_at - 61, signature FROM used_signatures`)
    db.exec('DROP TABLE used_signatures')
  })()
}

/** Creates the database file 0600 (or makes an existing one so) before SQLite opens it, whatever the umask. */
function keepPrivate(file: string): void {
  closeSync(openSync(file, 'a', 0o600))
  chmodSync(file, 0o600)
}

/**
 * The sealed secrets of the owners read lately (encrypted, as stored). An owner's entry goes when this process
 * writes for it; all go when another connection to the file committed (`PRAGMA data_version` moved).
 */
class ListCache {
  private readonly owners = new Map<string, SealedSecret[]>()
  private readonly dataVersion: Database.Statement<[], {data_version: number}>
  private version = -1

  constructor(db: Database.Database) {
    this.dataVersion = db.prepare('PRAGMA data_version')
  }

  get(owner: string, read: () => SealedSecret[]): SealedSecret[] {
    const version = this.dataVersion.get()?.data_version ?? -1
    if (version !== this.version) {
      this.owners.clear()
      this.version = version
    }
    let secrets = this.owners.get(owner)
    if (!secrets) {
      secrets = read()
      if (this.owners.size >= 1000) this.owners.delete(this.owners.keys().next().value as string)
      this.owners.set(owner, secrets)
    }
    return secrets
  }

  /** Runs a write for `owner`, forgetting what was read for it (also when the write fails half-way). */
  changed<T>(owner: string, write: () => T): T {
    this.owners.delete(owner)
    try {
      return write()
    } finally {
      this.owners.delete(owner)
    }
  }
}

interface PendingWrite {
  write: () => unknown
  durable: boolean
  resolve: (value: never) => void
  reject: (error: unknown) => void
}

/**
 * Collects the writes requested during one turn of the event loop and commits them in one transaction after
 * it (setImmediate), answering each once the commit is on disk.
 */
class GroupCommit {
  private pending: PendingWrite[] = []
  private scheduled = false
  private synchronous: 'FULL' | 'NORMAL' = 'FULL'
  private lastGroup = 1
  private readonly commit: (writes: PendingWrite[]) => Array<{ok: true; value: unknown} | {ok: false; error: unknown}>

  constructor(private readonly db: Database.Database) {
    this.commit = db.transaction((writes: PendingWrite[]) =>
      writes.map((w) => {
        try {
          return {ok: true as const, value: w.write()}
        } catch (error) {
          return {ok: false as const, error}
        }
      }),
    )
  }

  /** Queues a write (a better-sqlite3 transaction function); resolves with its result once committed (on disk when `durable`). */
  run<T>(write: () => T, durable: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({write, durable, resolve: resolve as (value: never) => void, reject})
      if (!this.scheduled) {
        this.scheduled = true
        this.gather()
      }
    })
  }

  /**
   * Waits, one turn of the event loop at a time and at most 1 ms (less than a fsync), until as many writes are
   * queued as the last commit held: the clients answered by that commit are sending their next writes, and
   * those that arrive in time share this commit instead of waiting for another fsync. Writes that need no
   * fsync are committed at once.
   */
  private gather(since = performance.now()): void {
    setImmediate(() => {
      const worthWaiting = this.pending.length < this.lastGroup && this.pending.some((w) => w.durable)
      if (worthWaiting && performance.now() - since < 1) this.gather(since)
      else this.flush()
    })
  }

  /** Commits what is queued now. */
  flush(): void {
    this.scheduled = false
    const writes = this.pending
    if (writes.length === 0) return
    this.pending = []
    this.lastGroup = writes.length
    const synchronous = writes.some((w) => w.durable) ? 'FULL' : 'NORMAL'
    let outcomes
    try {
      if (synchronous !== this.synchronous) {
        this.db.exec(`PRAGMA synchronous = ${synchronous}`)
        this.synchronous = synchronous
      }
      outcomes = this.commit(writes)
    } catch (error) {
      for (const w of writes) w.reject(error)
      return
    }
    outcomes.forEach((outcome, i) => {
      const w = writes[i] as PendingWrite
      if (outcome.ok) w.resolve(outcome.value as never)
      else w.reject(outcome.error)
    })
  }
}
