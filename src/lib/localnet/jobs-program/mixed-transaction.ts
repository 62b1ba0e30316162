/**
 * A transaction that calls the jobs program, run instruction by instruction as the SVM would: jobs instructions by
 * the emulated program, every other one (system, SPL token, associated token account, ...) by litesvm, on the same
 * accounts, so each instruction sees what the ones before it wrote. Compute-budget instructions only set the fee.
 * The fee is taken first; a failing instruction puts every account back except the fee payer's fee.
 */
import {ComputeBudgetProgram, PublicKey, Transaction, TransactionInstruction} from '@solana/web3.js'
import {FailedTransactionMetadata, type LiteSvm, type TransactionMetadata} from 'litesvm/dist/internal.js'

import type {JobsProgramIds} from './context.js'
import {executeJobsInstruction} from './execute.js'
import {InstructionFailure} from './errors.js'
import {type AccountState, Overlay, readAccount, writeAccount} from '../chain/ledger.js'
import type {DecodedTransaction, ResolvedAccount} from '../chain/transaction.js'
import {type InstructionErrorJson, litesvmErrorToJson, type TransactionErrorJson} from '../chain/tx-error.js'

/** Lamports per signature, as on mainnet. */
export const LAMPORTS_PER_SIGNATURE = 5000n

/** The compute units an instruction gets when the transaction sets no limit, and the most a transaction gets. */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n
const MAX_UNITS = 1_400_000n

export interface MixedRun {
  err: TransactionErrorJson | null
  logs: string[]
  unitsConsumed: number
  /** False when the fee could not be paid: nothing was applied and the transaction never lands. */
  charged: boolean
  /** Every writable account as it was before the transaction, to put back (simulation, refused preflight). */
  before: [PublicKey, AccountState | null][]
}

export interface MixedContext {
  svm: LiteSvm
  program: JobsProgramIds
  now: bigint
  rentExempt: (size: number) => bigint
}

/**
 * The fee of a transaction: 5000 lamports per signature, plus the priority fee its compute-budget instructions
 * ask for (unit price x unit limit, rounded up). A malformed compute-budget instruction is returned as the error.
 */
export function transactionFee(
  tx: DecodedTransaction,
  accounts: ResolvedAccount[],
): {fee: bigint} | {err: TransactionErrorJson} {
  let limit: bigint | null = null
  let microLamports = 0n
  let others = 0n
  for (const [index, ix] of tx.message.compiledInstructions.entries()) {
    if (!accounts[ix.programIdIndex]!.pubkey.equals(ComputeBudgetProgram.programId)) {
      others += 1n
      continue
    }
    const data = Buffer.from(ix.data)
    const invalid = {err: {InstructionError: [index, 'InvalidInstructionData']} as TransactionErrorJson}
    if (data[0] === 2) {
      if (data.length !== 5) return invalid
      limit = BigInt(data.readUInt32LE(1))
    } else if (data[0] === 3) {
      if (data.length !== 9) return invalid
      microLamports = data.readBigUInt64LE(1)
    } else if (data[0] === 1 || data[0] === 4) {
      if (data.length !== 5) return invalid
    } else {
      return invalid
    }
  }
  const units = limit ?? others * DEFAULT_UNITS_PER_INSTRUCTION
  const capped = units > MAX_UNITS ? MAX_UNITS : units
  const priority = (microLamports * capped + 999_999n) / 1_000_000n
  return {fee: LAMPORTS_PER_SIGNATURE * BigInt(tx.message.header.numRequiredSignatures) + priority}
}

/** Runs the transaction's instructions in order on litesvm's accounts; see the module comment. */
export function runMixedTransaction(ctx: MixedContext, tx: DecodedTransaction, accounts: ResolvedAccount[]): MixedRun {
  const {svm} = ctx
  const writable = unique(accounts.filter((a) => a.isWritable).map((a) => a.pubkey))
  const before = writable.map((key) => [key, readAccount(svm, key)] as [PublicKey, AccountState | null])
  const priced = transactionFee(tx, accounts)
  if ('err' in priced) return {err: priced.err, logs: [], unitsConsumed: 0, charged: false, before}
  const feePayer = accounts[0]!.pubkey
  const payer = readAccount(svm, feePayer)
  const refused = (err: TransactionErrorJson): MixedRun => ({err, logs: [], unitsConsumed: 0, charged: false, before})
  if (!payer) return refused('AccountNotFound')
  if (payer.lamports < priced.fee) return refused('InsufficientFundsForFee')
  const charge = () => {
    const current = readAccount(svm, feePayer)!
    writeAccount(svm, feePayer, {...current, lamports: current.lamports - priced.fee})
  }
  charge()

  const logs: string[] = []
  let unitsConsumed = 0
  let err: TransactionErrorJson | null = null
  for (const [index, ix] of tx.message.compiledInstructions.entries()) {
    const program = accounts[ix.programIdIndex]!.pubkey
    const keys = ix.accountKeyIndexes.map((i) => accounts[i]!)
    if (program.equals(ComputeBudgetProgram.programId)) {
      logs.push(`Program ${program.toBase58()} invoke [1]`, `Program ${program.toBase58()} success`)
      continue
    }
    const failure = program.equals(ctx.program.programId)
      ? runJobsInstruction(ctx, keys, ix.data, logs)
      : runWithLitesvm(
          ctx,
          feePayer,
          new TransactionInstruction({programId: program, keys, data: Buffer.from(ix.data)}),
          tx,
          logs,
        )
    unitsConsumed += failure.units
    if (failure.error !== null) {
      err =
        typeof failure.error === 'object' && 'InstructionError' in failure.error
          ? {InstructionError: [index, failure.error.InstructionError[1]]}
          : failure.error
      break
    }
  }
  if (err) {
    // Nothing but the fee: every account as before, then the fee taken again.
    restore(svm, before)
    charge()
  }
  return {err, logs, unitsConsumed, charged: true, before}
}

/** Puts accounts back as they were. */
export function restore(svm: LiteSvm, states: [PublicKey, AccountState | null][]): void {
  for (const [key, state] of states) writeAccount(svm, key, state)
}

interface StepResult {
  error: TransactionErrorJson | null
  units: number
}

function runJobsInstruction(
  ctx: MixedContext,
  accounts: ResolvedAccount[],
  data: Uint8Array,
  logs: string[],
): StepResult {
  const program = ctx.program.programId.toBase58()
  logs.push(`Program ${program} invoke [1]`)
  const overlay = new Overlay(ctx.svm)
  try {
    executeJobsInstruction({
      ids: ctx.program,
      accounts,
      data,
      ledger: overlay,
      now: ctx.now,
      rentExempt: ctx.rentExempt,
      log: (line) => logs.push(line),
    })
  } catch (error) {
    if (!(error instanceof InstructionFailure)) throw error
    logs.push(...error.logs)
    const code =
      typeof error.error === 'object' && 'Custom' in error.error
        ? `custom program error: 0x${error.error.Custom.toString(16)}`
        : String(error.error)
    logs.push(`Program ${program} failed: ${code}`)
    return {error: {InstructionError: [0, error.error as InstructionErrorJson]}, units: 0}
  }
  overlay.commit()
  logs.push(`Program ${program} success`)
  return {error: null, units: 0}
}

/**
 * Runs one instruction as a transaction of its own through litesvm (signatures and blockhash are checked once, for
 * the whole transaction, by the chain), with the fee payer first credited the fee litesvm takes for it.
 */
function runWithLitesvm(
  ctx: MixedContext,
  feePayer: PublicKey,
  instruction: TransactionInstruction,
  tx: DecodedTransaction,
  logs: string[],
): StepResult {
  const message = new Transaction({feePayer, recentBlockhash: tx.message.recentBlockhash})
    .add(instruction)
    .compileMessage()
  const signatures = message.header.numRequiredSignatures
  const payer = readAccount(ctx.svm, feePayer)!
  writeAccount(ctx.svm, feePayer, {...payer, lamports: payer.lamports + LAMPORTS_PER_SIGNATURE * BigInt(signatures)})
  const wire = Buffer.concat([Buffer.from([signatures]), Buffer.alloc(64 * signatures), message.serialize()])
  const result = ctx.svm.sendLegacyTransaction(wire)
  const failed = result instanceof FailedTransactionMetadata ? result : null
  const meta = failed ? failed.meta() : (result as TransactionMetadata)
  logs.push(...meta.logs())
  return {error: failed ? litesvmErrorToJson(failed) : null, units: Number(meta.computeUnitsConsumed())}
}

function unique(keys: PublicKey[]): PublicKey[] {
  const seen = new Map<string, PublicKey>()
  for (const key of keys) seen.set(key.toBase58(), key)
  return [...seen.values()]
}
