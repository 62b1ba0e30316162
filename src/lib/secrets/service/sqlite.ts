import type Database from 'better-sqlite3'
import {chmodSync, closeSync, existsSync, fdatasyncSync, mkdirSync, openSync} from 'node:fs'
import {dirname} from 'node:path'

import {keepPrivate, openSqlite} from '../../sqlite/open.js'
import {checkQuota, type Quota, type SealedSecret, type SecretStorage, StorageBusyError} from './storage.js'

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
 * The embedded storage: one SQLite file in WAL mode. A write of secrets is answered once it is on disk, so it
 * survives a crash of the machine: committed with synchronous=NORMAL (which keeps the file consistent through
 * a crash, syncing at checkpoints) and then flushed with an fdatasync of the WAL, shared by the writes committed
 * together (see GroupCommit). Each write of a group runs in a savepoint of its own, so one refused write
 * changes nothing and does not fail the others. Login records are answered once committed, without waiting for
 * the disk: they survive a crash of the service, and only a crash of the machine within the two minutes a
 * signature is valid could forget one.
 */
export function openSqliteStorage(
  file: string,
  options: {
    dataSync?: DataSync
    /** How long a commit waits for another process's write lock (5 s). */ busyTimeoutMs?: number
  } = {},
): SecretStorage {
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  keepPrivate(file)
  const db = openSqlite(file)
  const busyTimeout = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = ${busyTimeout}`)
  db.exec(SCHEMA)
  migrateUsedSignatures(db)
  // SQLite gives -wal and -shm the database file's mode; these may predate that file's chmod.
  for (const suffix of ['-wal', '-shm']) if (existsSync(`${file}${suffix}`)) chmodSync(`${file}${suffix}`, 0o600)
  // The WAL exists from the first write above, and SQLite removes it only when the last connection closes: this
  // one is open until close(), so the descriptor names the file commits go to for the storage's whole life.
  const wal = openSync(`${file}-wal`, 'r+')

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

  const writes = new GroupCommit(db, wal, options.dataSync ?? fdatasyncSync)
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
      writes.flush(true)
      db.close()
      closeSync(wal)
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

/** Commits tried at most while another process holds the file's write lock, each after busy_timeout ran out. */
const BUSY_ATTEMPTS = 3

/**
 * Runs a commit, again while the database stays busy. The commit starts with BEGIN IMMEDIATE, so it takes the
 * write lock before reading anything: a deferred one that read first and found another process's commit after
 * its snapshot fails at once with SQLITE_BUSY, without waiting (SQLite cannot upgrade a stale snapshot).
 */
function commitWhenFree<T>(commit: () => T): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return commit()
    } catch (error) {
      if (!isBusy(error) || attempt >= BUSY_ATTEMPTS) throw error
    }
  }
}

function isBusy(error: unknown): boolean {
  return /^SQLITE_(BUSY|LOCKED)/.test(String((error as {code?: unknown}).code ?? ''))
}

interface PendingWrite {
  write: () => unknown
  durable: boolean
  resolve: (value: never) => void
  reject: (error: unknown) => void
}

/** Flushes a file's data to the disk, throwing on failure (node:fs `fdatasyncSync`; tests wrap it to watch the order of events). */
export type DataSync = (fd: number) => void

/** How long a lone durable write may wait for the other writers' next writes before the flush. */
const GATHER_MS = 1
/** The span over which the most durable writes seen in flight at once is remembered (see `GroupCommit.peak`). */
const PEAK_WINDOW_MS = 1000

/**
 * Group commit. The writes requested during one turn of the event loop are committed together in one
 * transaction after it (setImmediate), with synchronous=NORMAL, and when durable ones are among them, answered
 * after one fdatasync of the WAL. Durable writes wait (at most GATHER_MS, with the event loop free, not spinning)
 * until as many are queued as were lately in flight at once: the writers answered by the last commit are sending
 * their next writes, and one commit and flush for all of them beats one each, which staggered writers would
 * settle into otherwise. fdatasync, unlike the fsync SQLite calls with synchronous=FULL, skips the file's mtime,
 * whose journal commit made a flush several times slower on a busy disk. The flush runs on the event loop: on
 * the thread pool, with the loop serving meanwhile, it measured slower on a quiet machine (the two thread hops
 * cost more than the overlap gave).
 */
class GroupCommit {
  private pending: PendingWrite[] = []
  private scheduled = false
  private gatherTimer: NodeJS.Timeout | undefined
  // Durable writes queued and not answered yet, and the most of them at once in this window and the one before.
  private inFlight = 0
  private peak = {now: 0, before: 0, windowEnds: 0}
  // After a failed fdatasync the disk's state is unknown (the kernel may have dropped the pages): every later
  // durable write fails too, until the service is restarted.
  private failure: Error | undefined
  private readonly commit: Database.Transaction<
    (writes: PendingWrite[]) => Array<{ok: true; value: unknown} | {ok: false; error: unknown}>
  >

  constructor(
    db: Database.Database,
    private readonly wal: number,
    private readonly dataSync: DataSync,
  ) {
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
    if (durable && this.failure) return Promise.reject(this.failure)
    return new Promise<T>((resolve, reject) => {
      if (durable) {
        this.inFlight++
        this.notePeak()
      }
      this.pending.push({write, durable, resolve: resolve as (value: never) => void, reject})
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  /** Commits what is queued now, but durable writes still worth gathering (`now`: all of them). */
  flush(now = false): void {
    this.scheduled = false
    const durable = this.pending.filter((w) => w.durable).length
    const gather = !now && durable > 0 && durable < Math.max(this.peak.now, this.peak.before)
    const writes = gather ? this.pending.filter((w) => !w.durable) : this.pending
    this.pending = gather ? this.pending.filter((w) => w.durable) : []
    if (gather) this.gatherTimer ??= setTimeout(() => this.flush(true), GATHER_MS)
    else {
      clearTimeout(this.gatherTimer)
      this.gatherTimer = undefined
    }
    if (writes.length === 0) return
    let outcomes: ReturnType<typeof this.commit>
    try {
      outcomes = commitWhenFree(() => this.commit.immediate(writes))
    } catch (error) {
      outcomes = writes.map(() => ({ok: false, error: isBusy(error) ? new StorageBusyError() : error}))
    }
    if (!gather && durable > 0 && !this.failure && outcomes.some((o) => o.ok)) {
      try {
        this.dataSync(this.wal)
      } catch (error) {
        this.failure = new Error(`cannot flush the secrets database to the disk: ${(error as Error).message}`)
      }
    }
    outcomes.forEach((outcome, i) => {
      const w = writes[i] as PendingWrite
      if (w.durable) this.inFlight--
      if (!outcome.ok) w.reject(outcome.error)
      else if (w.durable && this.failure) w.reject(this.failure)
      else w.resolve(outcome.value as never)
    })
  }

  private notePeak(): void {
    const now = performance.now()
    if (now >= this.peak.windowEnds) {
      this.peak = {now: 0, before: this.peak.now, windowEnds: now + PEAK_WINDOW_MS}
    }
    this.peak.now = Math.max(this.peak.now, this.inFlight)
  }
}
