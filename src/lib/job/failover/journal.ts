/**
 * The failover journal: one SQLite file in gpunet's data folder, one row per move of a job from one market to the
 * next (docs/jobs.md, "Failover"). Each transaction of a move is signed once and its bytes written here before it is
 * sent: the delist of the old job, then the `list` of the new one (its address known before it is sent, so a listing
 * that landed can be found). A process killed at any point leaves a row that the next command touching the job
 * settles from the chain (settle.ts): never two live listings of one job, never a deposit lost.
 */
import {chmodSync, existsSync, mkdirSync} from 'node:fs'
import {dirname, join} from 'node:path'

import type Database from 'better-sqlite3'

import type {SignedOnce} from '../../market/rpc/send.js'
import {keepPrivate, openSqlite} from '../../sqlite/open.js'

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS moves (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    network TEXT NOT NULL,
    program TEXT NOT NULL,
    project TEXT NOT NULL,
    old_job TEXT NOT NULL,
    from_market TEXT NOT NULL,
    to_market TEXT,
    why TEXT NOT NULL,
    cid TEXT NOT NULL,
    timeout INTEGER,
    stage TEXT NOT NULL,
    delist TEXT,
    new_job TEXT,
    new_run TEXT,
    list TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS moves_old ON moves (network, old_job);
  CREATE INDEX IF NOT EXISTS moves_new ON moves (network, new_job);
  CREATE INDEX IF NOT EXISTS moves_open ON moves (network, stage);
`

/**
 * Where a move is. Open stages: `delist-saved` (the delist's bytes saved, maybe sent), `delisted` (it landed: the
 * deposit is back), `list-saved` (the new listing's bytes saved, maybe sent). Final stages: `moved` (the new job is
 * listed), `taken` (a node took the old job first: it runs, no move), `kept` (the delist never landed: the old job
 * is still listed), `ended` (delisted with no market left to list on: nothing listed, the deposit back).
 */
export type MoveStage = 'delist-saved' | 'delisted' | 'list-saved' | 'moved' | 'taken' | 'kept' | 'ended'

/** The stages a move ends in. */
export const FINAL_STAGES: readonly MoveStage[] = ['moved', 'taken', 'kept', 'ended']

/** One move as the journal holds it. */
export interface MoveRow {
  id: number
  network: string
  program: string
  /** The wallet that posted the job (its project), which alone may delist it and pays the new listing. */
  project: string
  oldJob: string
  fromMarket: string
  /** The market the job moves to; null when none was left (the old job is delisted, nothing listed). */
  toMarket: string | null
  why: string
  /** The definition's CIDv0, uploaded once: what a listing made again after a crash names. */
  cid: string
  /** The job's own timeout (seconds), or null for each market's job timeout. */
  timeout: number | null
  stage: MoveStage
  delist: SignedOnce | null
  newJob: string | null
  newRun: string | null
  list: SignedOnce | null
  createdAt: number
  updatedAt: number
}

/** What a move starts with: the job, where it goes and why, and the delist's bytes (saved before they are sent). */
export type MoveStart = Pick<
  MoveRow,
  'network' | 'program' | 'project' | 'oldJob' | 'fromMarket' | 'toMarket' | 'why' | 'cid' | 'timeout'
> & {delist: SignedOnce}

interface StoredRow {
  id: number
  network: string
  program: string
  project: string
  old_job: string
  from_market: string
  to_market: string | null
  why: string
  cid: string
  timeout: number | null
  stage: MoveStage
  delist: string | null
  new_job: string | null
  new_run: string | null
  list: string | null
  created_at: number
  updated_at: number
}

/** The journal's file in gpunet's data folder. */
export function journalFile(dataDir: string): string {
  return join(dataDir, 'failover', 'journal.sqlite')
}

/** The failover journal: rows written before each transaction of a move is sent. */
export interface FailoverJournal {
  /** Saves a new move with its delist's bytes, before they are sent (stage `delist-saved`). */
  begin(start: MoveStart): MoveRow
  /** The delist landed: the old job's deposit is back. */
  delisted(id: number): MoveRow
  /** Saves the new listing's bytes and its job and run addresses, before they are sent (stage `list-saved`). */
  listing(id: number, listing: {job: string; run: string; list: SignedOnce}): MoveRow
  /** The move ended in a final stage. */
  finish(id: number, stage: (typeof FINAL_STAGES)[number]): MoveRow
  /** The moves not ended yet on `network`; of one job (its old or new address) when given. */
  open(network: string, job?: string): MoveRow[]
  /** The move that took `job` away (it is its old job), the last one. */
  movedFrom(network: string, job: string): MoveRow | null
  /** The move that made `job` (it is its new job). */
  movedTo(network: string, job: string): MoveRow | null
  close(): void
}

/** Opens (creating) the journal at `file`, mode 0600 in a 0700 folder. */
export function openFailoverJournal(file: string, now: () => number = Date.now): FailoverJournal {
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  keepPrivate(file)
  const db: Database.Database = openSqlite(file)
  // FULL: a row said saved must be on disk before its transaction is sent, even if the machine stops then.
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000')
  db.exec(SCHEMA)
  for (const suffix of ['-wal', '-shm']) if (existsSync(`${file}${suffix}`)) chmodSync(`${file}${suffix}`, 0o600)
  const byId = db.prepare<[number], StoredRow>('SELECT * FROM moves WHERE id = ?')
  const row = (id: number): MoveRow => {
    const found = byId.get(id)
    if (!found) throw new Error(`no move ${id} in the failover journal`)
    return fromStored(found)
  }
  const update = (id: number, fields: Record<string, string | number | null>): MoveRow => {
    const names = Object.keys(fields)
    db.prepare(`UPDATE moves SET ${names.map((n) => `${n} = @${n}`).join(', ')}, updated_at = @now WHERE id = @id`).run(
      {...fields, now: now(), id},
    )
    return row(id)
  }
  const finals = FINAL_STAGES.map((s) => `'${s}'`).join(', ')
  const openRows = db.prepare<[string], StoredRow>(
    `SELECT * FROM moves WHERE network = ? AND stage NOT IN (${finals}) ORDER BY id`,
  )
  const openOf = db.prepare<[string, string, string], StoredRow>(
    `SELECT * FROM moves WHERE network = ? AND (old_job = ? OR new_job = ?) AND stage NOT IN (${finals}) ORDER BY id`,
  )
  const from = db.prepare<[string, string], StoredRow>(
    'SELECT * FROM moves WHERE network = ? AND old_job = ? ORDER BY id DESC LIMIT 1',
  )
  const to = db.prepare<[string, string], StoredRow>(
    'SELECT * FROM moves WHERE network = ? AND new_job = ? ORDER BY id DESC LIMIT 1',
  )
  return {
    begin(start) {
      const at = now()
      const {lastInsertRowid} = db
        .prepare(
          `INSERT INTO moves (network, program, project, old_job, from_market, to_market, why, cid, timeout, stage,
             delist, created_at, updated_at)
           VALUES (@network, @program, @project, @oldJob, @fromMarket, @toMarket, @why, @cid, @timeout, 'delist-saved',
             @delist, @at, @at)`,
        )
        .run({...start, delist: JSON.stringify(start.delist), at})
      return row(Number(lastInsertRowid))
    },
    delisted: (id) => update(id, {stage: 'delisted'}),
    listing: (id, {job, run, list}) =>
      update(id, {stage: 'list-saved', new_job: job, new_run: run, list: JSON.stringify(list)}),
    finish: (id, stage) => update(id, {stage}),
    open: (network, job) => (job ? openOf.all(network, job, job) : openRows.all(network)).map(fromStored),
    movedFrom: (network, job) => nullable(from.get(network, job)),
    movedTo: (network, job) => nullable(to.get(network, job)),
    close: () => db.close(),
  }
}

function nullable(found: StoredRow | undefined): MoveRow | null {
  return found ? fromStored(found) : null
}

function fromStored(r: StoredRow): MoveRow {
  return {
    id: r.id,
    network: r.network,
    program: r.program,
    project: r.project,
    oldJob: r.old_job,
    fromMarket: r.from_market,
    toMarket: r.to_market,
    why: r.why,
    cid: r.cid,
    timeout: r.timeout,
    stage: r.stage,
    delist: r.delist ? (JSON.parse(r.delist) as SignedOnce) : null,
    newJob: r.new_job,
    newRun: r.new_run,
    list: r.list ? (JSON.parse(r.list) as SignedOnce) : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }
}
