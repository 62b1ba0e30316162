/**
 * Chain state on disk: a litesvm snapshot plus a journal of every transaction's effects since then. Each
 * transaction's record (the final state of the accounts it wrote, and its status) is appended before the
 * RPC answers, so a `kill -9` loses at most a transaction that was not answered yet. Replaying a record is
 * idempotent (it holds final states, not deltas), so a crash while compacting is harmless too.
 */
import {appendFileSync, existsSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {PublicKey} from '@solana/web3.js'
import {LiteSvm} from 'litesvm/dist/internal.js'

import {type AccountState, writeAccount} from './ledger.js'
import type {TransactionErrorJson} from './tx-error.js'

/** Final state of an account written by a transaction: [address, lamports, owner, executable, base64 data] or deleted. */
type AccountRecord = [string, string, string, boolean, string] | [string, null]

export interface SignatureStatus {
  slot: number
  err: TransactionErrorJson | null
}

interface JournalRecord {
  sig: string | null
  slot: number
  err: TransactionErrorJson | null
  accounts: AccountRecord[]
}

/** Signature statuses kept for getSignatureStatuses and duplicate detection. */
const MAX_STATUSES = 100_000
/** Journal records after which the snapshot is rewritten. */
const COMPACT_AFTER = 2000

export class ChainStore {
  private readonly snapshot: string
  private readonly journal: string
  private readonly signatures: string
  private records = 0

  constructor(dir: string) {
    this.snapshot = join(dir, 'chain.bin')
    this.journal = join(dir, 'journal.ndjson')
    this.signatures = join(dir, 'signatures.json')
  }

  /** True when this directory holds a chain. */
  exists(): boolean {
    return existsSync(this.snapshot)
  }

  /** Loads the snapshot and replays the journal into it. */
  load(): {svm: LiteSvm; statuses: Map<string, SignatureStatus>} {
    const svm = LiteSvm.loadFromFile(this.snapshot)
    const statuses = new Map<string, SignatureStatus>(
      existsSync(this.signatures)
        ? (JSON.parse(readFileSync(this.signatures, 'utf8')) as [string, SignatureStatus][])
        : [],
    )
    for (const record of this.readJournal()) {
      for (const account of record.accounts) writeAccount(svm, new PublicKey(account[0]), decodeAccount(account))
      if (record.sig) statuses.set(record.sig, {slot: record.slot, err: record.err})
    }
    return {svm, statuses}
  }

  /** Appends a transaction's effects; synchronous so the record is in the OS before the client hears back. */
  append(sig: string | null, status: SignatureStatus, accounts: [PublicKey, AccountState | null][]): void {
    const record: JournalRecord = {
      sig,
      slot: status.slot,
      err: status.err,
      accounts: accounts.map(([k, s]) => encodeAccount(k, s)),
    }
    appendFileSync(this.journal, `${JSON.stringify(record)}\n`)
    this.records++
  }

  /** True when the journal is long enough that replaying it would slow the next start. */
  shouldCompact(): boolean {
    return this.records >= COMPACT_AFTER
  }

  /** Writes a fresh snapshot (atomically, by rename) and empties the journal. */
  compact(svm: LiteSvm, statuses: Map<string, SignatureStatus>): void {
    svm.saveToFile(`${this.snapshot}.tmp`)
    renameSync(`${this.snapshot}.tmp`, this.snapshot)
    const kept = [...statuses].slice(-MAX_STATUSES)
    writeFileSync(`${this.signatures}.tmp`, JSON.stringify(kept))
    renameSync(`${this.signatures}.tmp`, this.signatures)
    writeFileSync(this.journal, '')
    this.records = 0
  }

  private readJournal(): JournalRecord[] {
    if (!existsSync(this.journal)) return []
    const records: JournalRecord[] = []
    for (const line of readFileSync(this.journal, 'utf8').split('\n')) {
      if (!line) continue
      try {
        records.push(JSON.parse(line) as JournalRecord)
      } catch {
        // A line cut short by a kill during the write: the transaction it belonged to was never answered.
        break
      }
    }
    return records
  }
}

/** Drops the oldest statuses beyond the bound. */
export function trimStatuses(statuses: Map<string, SignatureStatus>): void {
  if (statuses.size <= MAX_STATUSES) return
  for (const key of statuses.keys()) {
    statuses.delete(key)
    if (statuses.size <= MAX_STATUSES) break
  }
}

function encodeAccount(key: PublicKey, s: AccountState | null): AccountRecord {
  const address = key.toBase58()
  return s
    ? [address, s.lamports.toString(), s.owner.toBase58(), s.executable, s.data.toString('base64')]
    : [address, null]
}

function decodeAccount(record: AccountRecord): AccountState | null {
  if (record[1] === null) return null
  const [, lamports, owner, executable, data] = record as [string, string, string, boolean, string]
  return {lamports: BigInt(lamports), owner: new PublicKey(owner), executable, data: Buffer.from(data, 'base64')}
}
