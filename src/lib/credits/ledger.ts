/**
 * The localnet's credit ledger, in one SQLite file (WAL) of its data directory: what each owner was given
 * (`localnet fund --credits`), what its credit-paid jobs hold reserved (price x timeout, as the market's deposit) and
 * what they cost once settled (price x the seconds they ran, as the market pays its node), and the answers given to
 * each Idempotency-Key. Amounts are credit base units (6 decimals: one credit is 1,000,000), integers throughout.
 */
import {chmodSync, existsSync, mkdirSync} from 'node:fs'
import {dirname} from 'node:path'

import type Database from 'better-sqlite3'

import {keepPrivate, openSqlite} from '../sqlite/open.js'
import {isAlive} from '../process/alive.js'

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS credit_accounts (
    owner TEXT PRIMARY KEY,
    assigned INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS credit_jobs (
    job TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    market TEXT NOT NULL,
    price INTEGER NOT NULL,
    reserved INTEGER NOT NULL,
    settled INTEGER,
    tx TEXT,
    created_at INTEGER NOT NULL,
    settled_at INTEGER
  );
  CREATE INDEX IF NOT EXISTS credit_jobs_owner ON credit_jobs (owner, settled);
  CREATE TABLE IF NOT EXISTS credit_requests (
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    request TEXT NOT NULL,
    status INTEGER,
    answer TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (owner, key)
  );
`

/**
 * Members added to credit_requests after its first release (a ledger of then is given them on open): the process
 * that claimed a key (its pid and when it started), and what a listing it sent was (`intent`), saved before sending.
 */
const REQUEST_COLUMNS = {holder_pid: 'INTEGER', holder_start: 'INTEGER', intent: 'TEXT'} as const

/** This process, as a key's holder: its pid and its start (ms), so a restart that reuses the pid is told apart. */
const HOLDER = {pid: process.pid, start: Math.round(Date.now() - process.uptime() * 1000)}

/** An owner's credits: given, held for jobs that have not ended, and spent on jobs that have. */
export interface CreditBalance {
  assigned: number
  reserved: number
  settled: number
}

/** A credit-paid job: its owner (who holds the API key), its price per second and what it holds or cost. */
export interface CreditJob {
  job: string
  owner: string
  market: string
  price: number
  reserved: number
  settled: number | null
  /** The transaction that listed it, once sent. */
  tx: string | null
}

/** What an Idempotency-Key has seen: nothing yet, the same request in progress or answered, or another request. */
export type KeyState =
  {state: 'new'} | {state: 'pending'} | {state: 'answered'; status: number; answer: unknown} | {state: 'conflict'}

/** What a listing or extension under an Idempotency-Key sent, saved before sending: enough to answer or undo it. */
export interface ListingIntent {
  kind: 'list' | 'extend'
  job: string
  /** The transaction's signature (its id) and the last block height its blockhash is valid for. */
  tx: string
  lastValidBlockHeight: number
  /** The hold taken for it (credit base units). */
  units: number
  /** The answer given once it landed. */
  status: number
  answer: unknown
}

/** An Idempotency-Key left in progress by a process that is gone (it stopped mid-request). */
export interface OrphanRequest {
  owner: string
  key: string
  /** What it was sending, when it got that far; null when it sent nothing the ledger knows of. */
  intent: ListingIntent | null
}

export interface CreditLedger {
  /** Adds `units` to what `owner` was given; returns the new balance. */
  topUp(owner: string, units: number, now: number): CreditBalance
  balance(owner: string): CreditBalance
  /**
   * Holds `units` for a new job (or more for an extension of one, `job` existing) when the owner has them free,
   * atomically: two posts at once cannot both spend the same credits. False when they do not.
   */
  reserve(owner: string, hold: {job: string; market: string; price: number; units: number}, now: number): boolean
  /** Gives back a hold that never paid for anything (the transaction did not land). */
  release(job: string, units: number): void
  /** Records the transaction that lists a job (saved before it is sent). */
  listed(job: string, tx: string): void
  /** Ends a job's hold: it cost `units` (at most what it held); the rest is free again. */
  settle(job: string, units: number, now: number): void
  job(job: string): CreditJob | undefined
  /** The owner's jobs whose hold is not settled yet. */
  openJobs(owner: string): CreditJob[]
  /** Claims an Idempotency-Key for `request` (a digest of route and body), or says what it has seen. */
  claimKey(owner: string, key: string, request: string, now: number): KeyState
  /** Stores the answer given under a claimed key. */
  answerKey(owner: string, key: string, status: number, answer: unknown): void
  /** Frees a claimed key whose request failed before it acted: it may be sent again. */
  dropKey(owner: string, key: string): void
  /** Saves, under a claimed key, the listing or extension about to be sent. */
  intend(owner: string, key: string, intent: ListingIntent): void
  /**
   * The keys left in progress by a process that is gone: claimed by another process than this one whose pid is not
   * alive, or is this process's pid again (a restart in a container reuses it).
   */
  orphans(): OrphanRequest[]
  close(): void
}

/** Opens (creating) the ledger at `file`, mode 0600 in a 0700 folder. */
export function openCreditLedger(file: string): CreditLedger {
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  keepPrivate(file)
  const db: Database.Database = openSqlite(file)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000')
  db.exec(SCHEMA)
  const columns = new Set(
    db
      .prepare<[], {name: string}>('PRAGMA table_info(credit_requests)')
      .all()
      .map((c) => c.name),
  )
  for (const [name, type] of Object.entries(REQUEST_COLUMNS))
    if (!columns.has(name)) db.exec(`ALTER TABLE credit_requests ADD COLUMN ${name} ${type}`)
  for (const suffix of ['-wal', '-shm']) if (existsSync(`${file}${suffix}`)) chmodSync(`${file}${suffix}`, 0o600)

  const q = {
    assigned: db.prepare<[string], {assigned: number}>('SELECT assigned FROM credit_accounts WHERE owner = ?'),
    addAssigned: db.prepare(
      `INSERT INTO credit_accounts (owner, assigned, updated_at) VALUES (@owner, @units, @now)
       ON CONFLICT (owner) DO UPDATE SET assigned = assigned + @units, updated_at = @now`,
    ),
    sums: db.prepare<[string], {reserved: number | null; settled: number | null}>(
      `SELECT SUM(CASE WHEN settled IS NULL THEN reserved ELSE 0 END) AS reserved, SUM(settled) AS settled
       FROM credit_jobs WHERE owner = ?`,
    ),
    job: db.prepare<[string], CreditJob>(
      'SELECT job, owner, market, price, reserved, settled, tx FROM credit_jobs WHERE job = ?',
    ),
    open: db.prepare<[string], CreditJob>(
      'SELECT job, owner, market, price, reserved, settled, tx FROM credit_jobs WHERE owner = ? AND settled IS NULL',
    ),
    insertJob: db.prepare(
      `INSERT INTO credit_jobs (job, owner, market, price, reserved, created_at)
       VALUES (@job, @owner, @market, @price, @units, @now)`,
    ),
    addHold: db.prepare('UPDATE credit_jobs SET reserved = reserved + ? WHERE job = ? AND settled IS NULL'),
    release: db.prepare('UPDATE credit_jobs SET reserved = reserved - ? WHERE job = ?'),
    // A hold given back whole was a listing that never landed: no job to keep a row for.
    dropUnlisted: db.prepare('DELETE FROM credit_jobs WHERE job = ? AND settled IS NULL AND reserved <= 0'),
    listed: db.prepare('UPDATE credit_jobs SET tx = ? WHERE job = ?'),
    settle: db.prepare(
      'UPDATE credit_jobs SET settled = MIN(?, reserved), settled_at = ? WHERE job = ? AND settled IS NULL',
    ),
    key: db.prepare<[string, string], {request: string; status: number | null; answer: string | null}>(
      'SELECT request, status, answer FROM credit_requests WHERE owner = ? AND key = ?',
    ),
    claim: db.prepare(
      `INSERT INTO credit_requests (owner, key, request, created_at, holder_pid, holder_start)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    intend: db.prepare('UPDATE credit_requests SET intent = ? WHERE owner = ? AND key = ? AND status IS NULL'),
    pending: db.prepare<
      [],
      {owner: string; key: string; holder_pid: number | null; holder_start: number | null; intent: string | null}
    >('SELECT owner, key, holder_pid, holder_start, intent FROM credit_requests WHERE status IS NULL'),
    answer: db.prepare('UPDATE credit_requests SET status = ?, answer = ? WHERE owner = ? AND key = ?'),
    drop: db.prepare('DELETE FROM credit_requests WHERE owner = ? AND key = ? AND status IS NULL'),
  }

  const balance = (owner: string): CreditBalance => {
    const sums = q.sums.get(owner)
    return {assigned: q.assigned.get(owner)?.assigned ?? 0, reserved: sums?.reserved ?? 0, settled: sums?.settled ?? 0}
  }
  const free = (owner: string) => {
    const b = balance(owner)
    return b.assigned - b.reserved - b.settled
  }

  return {
    topUp(owner, units, now) {
      q.addAssigned.run({owner, units, now})
      return balance(owner)
    },
    balance,
    reserve: db.transaction(
      (owner: string, hold: {job: string; market: string; price: number; units: number}, now: number) => {
        if (free(owner) < hold.units) return false
        if (q.job.get(hold.job)) q.addHold.run(hold.units, hold.job)
        else q.insertJob.run({...hold, owner, now})
        return true
      },
    ),
    release: db.transaction((job: string, units: number) => {
      q.release.run(units, job)
      q.dropUnlisted.run(job)
    }),
    listed: (job, tx) => void q.listed.run(tx, job),
    settle: (job, units, now) => void q.settle.run(Math.max(0, units), now, job),
    job: (job) => q.job.get(job),
    openJobs: (owner) => q.open.all(owner),
    claimKey: db.transaction((owner: string, key: string, request: string, now: number): KeyState => {
      const seen = q.key.get(owner, key)
      if (!seen) {
        q.claim.run(owner, key, request, now, HOLDER.pid, HOLDER.start)
        return {state: 'new'}
      }
      if (seen.request !== request) return {state: 'conflict'}
      if (seen.status === null) return {state: 'pending'}
      return {state: 'answered', status: seen.status, answer: JSON.parse(seen.answer ?? 'null') as unknown}
    }),
    answerKey: (owner, key, status, answer) => void q.answer.run(status, JSON.stringify(answer), owner, key),
    dropKey: (owner, key) => void q.drop.run(owner, key),
    intend: (owner, key, intent) => void q.intend.run(JSON.stringify(intent), owner, key),
    orphans: () =>
      q.pending
        .all()
        .filter((row) => !(row.holder_pid === HOLDER.pid && row.holder_start === HOLDER.start))
        .filter((row) => row.holder_pid === null || row.holder_pid === HOLDER.pid || !isAlive(row.holder_pid))
        .map((row) => ({
          owner: row.owner,
          key: row.key,
          intent: row.intent === null ? null : (JSON.parse(row.intent) as ListingIntent),
        })),
    close: () => db.close(),
  }
}
