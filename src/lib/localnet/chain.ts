/**
 * The localnet's chain: litesvm runs SOL and SPL token transactions; in transactions that call the jobs program,
 * its instructions are executed here with the program's own checks (no binary of it exists) and the others by
 * litesvm, on the same account store, with the same fee, signature, blockhash and duplicate rules
 * (mixed-transaction.ts). Every transaction is applied whole or not at all.
 */

import {PublicKey} from '@solana/web3.js'
import {
  FailedTransactionMetadata,
  type LiteSvm,
  SimulatedTransactionInfo,
  type TransactionMetadata,
} from 'litesvm/dist/internal.js'

import type {JobsProgramIds} from './jobs-program/context.js'
import {type AccountState, readAccount, toState, writeAccount} from './chain/ledger.js'
import {restore, runMixedTransaction, transactionFee} from './jobs-program/mixed-transaction.js'
import {type ChainStore, type SignatureStatus, trimStatuses} from './chain/persistence.js'
import {CommitEvents} from './chain/commit-events.js'
import {MAX_PROCESSING_AGE, type SlotClock} from './chain/slots.js'
import {
  decodeTransaction,
  type DecodedTransaction,
  MalformedTransaction,
  resolveAccounts,
  type ResolvedAccount,
  verifySignatures,
} from './chain/transaction.js'
import {litesvmErrorToJson, type TransactionErrorJson} from './chain/tx-error.js'

export interface Execution {
  err: TransactionErrorJson | null
  logs: string[]
  unitsConsumed: number
}

/** What sending a transaction did: the RPC turns each case into a node's answer. */
export type SendOutcome =
  | {kind: 'landed'; signature: string; execution: Execution}
  | {kind: 'dropped'; signature: string}
  | {kind: 'preflight-failed'; execution: Execution}
  | {kind: 'bad-signature'}

export interface BlockhashInfo {
  blockhash: string
  lastValidBlockHeight: number
}

/** A landed transaction as `getTransaction` and `logsSubscribe` report it. */
export interface TransactionRecord {
  signature: string
  slot: number
  blockTime: number
  raw: Uint8Array
  version: 'legacy' | 0
  err: TransactionErrorJson | null
  logs: string[]
  fee: bigint
  unitsConsumed: number
  /** Every account of the transaction (lookup tables resolved), with its balance before and after. */
  accounts: ResolvedAccount[]
  preBalances: bigint[]
  postBalances: bigint[]
  /** How many of `accounts` came from lookup tables: writable ones, then read-only ones. */
  loaded: {writable: number; readonly: number}
}

/** Landed transactions `getTransaction` can still answer for, newest kept (docs/localnet.md). */
export const MAX_TRANSACTION_HISTORY = 10_000

/** Thrown for a request the localnet cannot serve (bad transaction bytes); the RPC reports it as invalid params. */
export class ChainInputError extends Error {}

export class Chain {
  /**
   * Emits `transaction` (its record) and `signature` (signature, status) when a transaction lands, and `accounts`
   * (the keys it wrote, slot) after it, for subscriptions.
   */
  readonly events = new CommitEvents()
  readonly programId: PublicKey
  /** The most recent landed transactions, oldest first (insertion order), at most MAX_TRANSACTION_HISTORY. */
  private readonly history = new Map<string, TransactionRecord>()

  constructor(
    readonly svm: LiteSvm,
    /** The addresses the emulated jobs program is built with. */
    readonly program: JobsProgramIds,
    readonly clock: SlotClock,
    private readonly statuses: Map<string, SignatureStatus>,
    private readonly store: ChainStore,
  ) {
    // The localnet checks signatures and blockhashes itself (one rule for both execution paths), and keeps its
    // own signature history so a transaction refused at preflight can be sent again.
    svm.setSigverify(false)
    svm.setBlockhashCheck(false)
    svm.setTransactionHistory(0n)
    this.programId = program.programId
    // Every WebSocket connection and the node listen here.
    this.events.setMaxListeners(0)
  }

  slot(): number {
    return this.clock.slot()
  }

  latestBlockhash(): BlockhashInfo {
    const slot = this.clock.slot()
    return {blockhash: this.clock.blockhash(slot), lastValidBlockHeight: slot + MAX_PROCESSING_AGE}
  }

  account(key: PublicKey): AccountState | null {
    return readAccount(this.svm, key)
  }

  /** Every account owned by `owner`. */
  programAccounts(owner: PublicKey): {pubkey: PublicKey; account: AccountState}[] {
    return this.svm
      .getProgramAccounts(owner.toBytes())
      .map((a) => ({pubkey: new PublicKey(a.address), account: toState(a.account())}))
  }

  rentExempt(size: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(size))
  }

  status(signature: string): SignatureStatus | null {
    return this.statuses.get(signature) ?? null
  }

  /** A landed transaction from the bounded history, or null. */
  transaction(signature: string): TransactionRecord | null {
    return this.history.get(signature) ?? null
  }

  /** Processes a wire transaction as `sendTransaction` does. */
  send(raw: Uint8Array, options: {skipPreflight?: boolean} = {}): SendOutcome {
    const tx = this.decode(raw)
    if (!verifySignatures(tx)) return {kind: 'bad-signature'}
    const txError = this.statuses.has(tx.signature)
      ? 'AlreadyProcessed'
      : this.clock.recentSlotOf(tx.message.recentBlockhash) === null
        ? 'BlockhashNotFound'
        : null
    if (txError) {
      // A node drops such a transaction without a trace; only preflight tells the sender why.
      return options.skipPreflight
        ? {kind: 'dropped', signature: tx.signature}
        : {kind: 'preflight-failed', execution: failed(txError)}
    }
    this.syncClock()
    const accounts = this.accounts(tx)
    const preBalances = accounts.map((a) => this.account(a.pubkey)?.lamports ?? 0n)
    const outcome = this.callsJobsProgram(tx, accounts) ? this.runJobs(tx, accounts) : this.runLitesvm(tx, accounts)
    if (!outcome.charged) {
      return options.skipPreflight
        ? {kind: 'dropped', signature: tx.signature}
        : {kind: 'preflight-failed', execution: outcome.execution}
    }
    if (outcome.execution.err && !options.skipPreflight) {
      outcome.discard()
      return {kind: 'preflight-failed', execution: outcome.execution}
    }
    const writes = outcome.keep()
    this.remember(tx, accounts, preBalances, outcome.execution)
    this.land(tx.signature, outcome.execution.err, writes)
    return {kind: 'landed', signature: tx.signature, execution: outcome.execution}
  }

  /** Runs a transaction without keeping its effects, as `simulateTransaction` does. */
  simulate(
    raw: Uint8Array,
    options: {sigVerify?: boolean; replaceRecentBlockhash?: boolean} = {},
  ): Execution | 'bad-signature' {
    const tx = this.decode(raw)
    if (options.sigVerify && !verifySignatures(tx)) return 'bad-signature'
    if (!options.replaceRecentBlockhash && this.clock.recentSlotOf(tx.message.recentBlockhash) === null) {
      return failed('BlockhashNotFound')
    }
    this.syncClock()
    const accounts = this.accounts(tx)
    if (this.callsJobsProgram(tx, accounts)) {
      const outcome = this.runJobs(tx, accounts)
      outcome.discard()
      return outcome.execution
    }
    const result =
      tx.message.version === 'legacy'
        ? this.svm.simulateLegacyTransaction(tx.raw)
        : this.svm.simulateVersionedTransaction(tx.raw)
    return execution(result.meta(), result instanceof SimulatedTransactionInfo ? null : litesvmErrorToJson(result))
  }

  /** Writes the snapshot and empties the journal (on shutdown, and when the journal grows long). */
  compact(): void {
    this.store.compact(this.svm, this.statuses)
  }

  private decode(raw: Uint8Array): DecodedTransaction {
    try {
      return decodeTransaction(raw)
    } catch (error) {
      throw new ChainInputError((error as Error).message)
    }
  }

  private accounts(tx: DecodedTransaction): ResolvedAccount[] {
    try {
      return resolveAccounts(tx, (key) => this.account(key)?.data ?? null)
    } catch (error) {
      if (error instanceof MalformedTransaction) throw new ChainInputError(error.message)
      throw error
    }
  }

  private callsJobsProgram(tx: DecodedTransaction, accounts: ResolvedAccount[]): boolean {
    return tx.message.compiledInstructions.some((ix) => accounts[ix.programIdIndex]?.pubkey.equals(this.programId))
  }

  private syncClock(): void {
    const clock = this.svm.getClock()
    clock.slot = BigInt(this.clock.slot())
    clock.unixTimestamp = this.clock.unixTimestamp()
    this.svm.setClock(clock)
  }

  private remember(
    tx: DecodedTransaction,
    accounts: ResolvedAccount[],
    preBalances: bigint[],
    execution: Execution,
  ): void {
    const priced = transactionFee(tx, accounts)
    const lookups = tx.message.addressTableLookups
    const record: TransactionRecord = {
      signature: tx.signature,
      slot: this.clock.slot(),
      blockTime: Number(this.clock.unixTimestamp()),
      raw: tx.raw,
      version: tx.message.version === 'legacy' ? 'legacy' : 0,
      err: execution.err,
      logs: execution.logs,
      fee: 'fee' in priced ? priced.fee : 0n,
      unitsConsumed: execution.unitsConsumed,
      accounts,
      preBalances,
      postBalances: accounts.map((a) => this.account(a.pubkey)?.lamports ?? 0n),
      loaded: {
        writable: lookups.reduce((n, l) => n + l.writableIndexes.length, 0),
        readonly: lookups.reduce((n, l) => n + l.readonlyIndexes.length, 0),
      },
    }
    this.history.set(tx.signature, record)
    if (this.history.size > MAX_TRANSACTION_HISTORY) this.history.delete(this.history.keys().next().value!)
    this.events.emit('transaction', record)
  }

  private land(signature: string, err: TransactionErrorJson | null, writes: [PublicKey, AccountState | null][]): void {
    const status = {slot: this.clock.slot(), err}
    this.statuses.set(signature, status)
    trimStatuses(this.statuses)
    this.store.append(signature, status, writes)
    if (this.store.shouldCompact()) this.compact()
    this.events.emit('signature', signature, status)
    if (writes.length > 0)
      this.events.emit(
        'accounts',
        writes.map(([key]) => key),
        status.slot,
      )
  }

  /** Writes accounts outside any transaction (genesis, the faucet's stake accounts), as subscribers see them. */
  setAccounts(writes: [PublicKey, AccountState | null][]): void {
    for (const [key, state] of writes) writeAccount(this.svm, key, state)
    this.store.append(null, {slot: this.clock.slot(), err: null}, writes)
    this.events.emit(
      'accounts',
      writes.map(([key]) => key),
      this.clock.slot(),
    )
  }

  /** Runs a transaction through litesvm, which applies it at once; `discard` puts the accounts back. */
  private runLitesvm(tx: DecodedTransaction, accounts: ResolvedAccount[]): RunOutcome {
    const writable = accounts.filter((a) => a.isWritable).map((a) => a.pubkey)
    const before = writable.map((k) => [k, readAccount(this.svm, k)] as const)
    const result =
      tx.message.version === 'legacy'
        ? this.svm.sendLegacyTransaction(tx.raw)
        : this.svm.sendVersionedTransaction(tx.raw)
    const failure = result instanceof FailedTransactionMetadata ? result : null
    const err = failure ? litesvmErrorToJson(failure) : null
    return {
      execution: execution(failure ? failure.meta() : (result as TransactionMetadata), err),
      // A transaction refused before execution (no fee taken) never lands; one that fails after it pays its fee.
      charged: err === null || readAccount(this.svm, writable[0]!)?.lamports !== before[0]![1]?.lamports,
      discard: () => before.forEach(([k, state]) => writeAccount(this.svm, k, state)),
      keep: () => writable.map((k) => [k, readAccount(this.svm, k)]),
    }
  }

  /** Runs a transaction that calls the jobs program, mixed with other programs' instructions or not. */
  private runJobs(tx: DecodedTransaction, accounts: ResolvedAccount[]): RunOutcome {
    const context = {
      svm: this.svm,
      program: this.program,
      now: this.clock.unixTimestamp(),
      rentExempt: (size: number) => this.rentExempt(size),
    }
    const run = runMixedTransaction(context, tx, accounts)
    return {
      execution: {err: run.err, logs: run.logs, unitsConsumed: run.unitsConsumed},
      charged: run.charged,
      discard: () => restore(this.svm, run.before),
      keep: () => run.before.map(([key]) => [key, readAccount(this.svm, key)]),
    }
  }
}

interface RunOutcome {
  execution: Execution
  /** False when the transaction was refused before it could pay its fee (it never lands). */
  charged: boolean
  /** Leaves the accounts as they were before the transaction. */
  discard: () => void
  /** Applies the transaction and returns the final state of every account it wrote. */
  keep: () => [PublicKey, AccountState | null][]
}

function execution(meta: TransactionMetadata, err: TransactionErrorJson | null): Execution {
  return {err, logs: meta.logs(), unitsConsumed: Number(meta.computeUnitsConsumed())}
}

function failed(err: TransactionErrorJson): Execution {
  return {err, logs: [], unitsConsumed: 0}
}
