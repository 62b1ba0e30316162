/**
 * Sending a jobs program transaction as a busy network needs it: simulated first (a failing instruction costs
 * nothing), a compute-unit limit from the simulation plus a margin, a compute-unit price from recent prioritization
 * fees over the accounts it writes (capped), then the same signed bytes resent until confirmed or their blockhash
 * expires, so a retry can never post twice.
 */
import {
  type BlockhashWithExpiryBlockHeight,
  ComputeBudgetProgram,
  type Connection,
  type Keypair,
  PublicKey,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'

import bs58 from 'bs58'

import {ExitCode, GpunetError, isGpunetError} from '../../errors.js'
import {type AmountJson, amountJson, formatAmount} from '../../text/amounts.js'
import {SIGNATURE_FEE, SOL_DECIMALS} from './balances.js'
import {inFlight, rpcCall, rpcFailure} from './rpc.js'
import {signedTransaction, signingKeys} from './sign.js'

/** The percentile of recent prioritization fees paid (the median would stall half the time on a busy network). */
export const PRIORITY_FEE_PERCENTILE = 75
/** The least compute-unit price sent when priority fees are on (micro-lamports), as the network's own client does. */
export const MIN_COMPUTE_UNIT_PRICE = 10_000n
/** The default cap on the priority fee of one transaction: 0.001 SOL. */
export const DEFAULT_MAX_PRIORITY_FEE_LAMPORTS = 1_000_000n
/** Margin over the simulated compute units: a proportion plus a constant. */
const UNITS_MARGIN = {factor: 1.2, extra: 1000}
const MAX_COMPUTE_UNITS = 1_400_000
/** Compute units a transaction may use without a limit instruction: 200,000 per instruction, at most 1.4M. */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000
/** The waits between two status checks: short at first (a localnet confirms at once), then a slot's length. */
const FIRST_STATUS_POLL_MS = 50
const STATUS_POLL_MS = 400
const RESEND_MS = 2000
/** Times a transaction is signed again with a fresh blockhash after the previous one expired unconfirmed. */
const EXPIRED_RETRIES = 2
/**
 * How long the blockhash fetched while preparing serves the first send: a small part of the 150 slots (about a
 * minute) it stays valid, so a transaction sent after a question to the user gets a new one.
 */
const FRESH_BLOCKHASH_MS = 10_000
/** What simulations carry as their blockhash: the node puts its latest in its place (replaceRecentBlockhash). */
const SIMULATION_BLOCKHASH = PublicKey.default.toBase58()

/** Whether to pay a priority fee and how much at most (see docs/networks.md). */
export interface FeePolicy {
  priorityFee: boolean
  maxPriorityFeeLamports: bigint
}

/** What a transaction costs in SOL, known before it is sent. */
export interface FeeQuote {
  /** Base fee plus priority fee, in lamports. */
  lamports: bigint
  baseLamports: bigint
  priorityLamports: bigint
  /** Micro-lamports per compute unit; 0 when no priority fee is paid. */
  computeUnitPrice: bigint
  /** The limit set from the simulation; null when the node reports no units (then the default applies). */
  computeUnitLimit: number | null
}

/** The `--json` shape of a fee. */
/**
 * A transaction's fee as every `--json` prints it (docs/json.md): an amount of SOL (base units: lamports), its
 * priority part, and the compute budget that priced it.
 */
export interface FeeJson extends AmountJson {
  /** The priority part of the fee (0 without a priority fee). */
  priority: AmountJson
  /** Micro-lamports per compute unit, as a decimal string ("0" without a priority fee). */
  computeUnitPrice: string
  /** The compute-unit limit set; null when none was (the runtime's default per instruction then applies). */
  computeUnitLimit: number | null
}

/**
 * A transaction ready to sign and send: its compute budget, its instructions and what it costs. The budget holds for
 * instructions that differ only in argument bytes (a `list` of another CID), so a quote can be made before upload.
 */
export interface PreparedTransaction {
  budget: TransactionInstruction[]
  instructions: TransactionInstruction[]
  signers: Keypair[]
  fee: FeeQuote
  /** The latest blockhash when it was prepared, and when it was asked for (Date.now()). */
  blockhash: BlockhashWithExpiryBlockHeight & {askedAt: number}
}

/** Simulates the instructions and prices them: compute-unit limit and price, fee. Fails here, before any spending. */
export async function prepareTransaction(
  connection: Connection,
  instructions: TransactionInstruction[],
  signers: Keypair[],
  policy: FeePolicy,
): Promise<PreparedTransaction> {
  const payer = signers[0]!.publicKey
  // Asked beside the simulation (which needs none) for the send that follows: one round trip less.
  const askedAt = Date.now()
  const latest = inFlight(rpcCall(connection, () => connection.getLatestBlockhash('confirmed')))
  const wanted = policy.priorityFee ? await recentPriorityFee(connection, writableAccounts(payer, instructions)) : 0n
  const probe = [
    ComputeBudgetProgram.setComputeUnitLimit({units: MAX_COMPUTE_UNITS}),
    ...(wanted > 0n ? [ComputeBudgetProgram.setComputeUnitPrice({microLamports: wanted})] : []),
    ...instructions,
  ]
  const simulated = await simulate(connection, payer, probe)
  const limit =
    simulated > 0 ? Math.min(MAX_COMPUTE_UNITS, Math.ceil(simulated * UNITS_MARGIN.factor) + UNITS_MARGIN.extra) : null
  const units = BigInt(limit ?? Math.min(MAX_COMPUTE_UNITS, DEFAULT_UNITS_PER_INSTRUCTION * instructions.length))
  // The cap is on the whole priority fee: price x units / 1e6 lamports.
  const cap = (policy.maxPriorityFeeLamports * 1_000_000n) / units
  const price = wanted > cap ? cap : wanted
  const priorityLamports = (price * units + 999_999n) / 1_000_000n
  const baseLamports = SIGNATURE_FEE * BigInt(new Set(signers.map((s) => s.publicKey.toBase58())).size)
  return {
    budget: [
      ...(limit === null ? [] : [ComputeBudgetProgram.setComputeUnitLimit({units: limit})]),
      ...(price > 0n ? [ComputeBudgetProgram.setComputeUnitPrice({microLamports: price})] : []),
    ],
    instructions,
    signers,
    blockhash: {...(await latest), askedAt},
    fee: {
      lamports: baseLamports + priorityLamports,
      baseLamports,
      priorityLamports,
      computeUnitPrice: price,
      computeUnitLimit: limit,
    },
  }
}

/** Signs once and sends the same bytes until confirmed; signs again only once the blockhash has surely expired. */
export async function sendPrepared(connection: Connection, prepared: PreparedTransaction): Promise<string> {
  const keys = signingKeys(prepared.signers)
  for (let attempt = 0; ; attempt++) {
    const {blockhash, lastValidBlockHeight} =
      attempt === 0 && Date.now() - prepared.blockhash.askedAt < FRESH_BLOCKHASH_MS
        ? prepared.blockhash
        : await rpcCall(connection, () => connection.getLatestBlockhash('confirmed'))
    const raw = signedTransaction(
      prepared.signers[0]!.publicKey,
      blockhash,
      [...prepared.budget, ...prepared.instructions],
      keys,
    )
    const signature = await sendSigned(connection, raw, lastValidBlockHeight)
    if (signature !== null) return signature
    if (attempt >= EXPIRED_RETRIES) {
      throw new GpunetError('transaction_expired', 'the transaction was not confirmed before its blockhash expired', {
        exitCode: ExitCode.UNAVAILABLE,
        hint: 'nothing was done; the network may be congested: try again, raise --max-priority-fee, or use another --rpc',
      })
    }
  }
}

/**
 * Sends signed bytes, again every few seconds, until they are confirmed (their signature) or their blockhash has
 * expired with them unconfirmed (null: they can never land). `resumed`: the bytes may have been sent before, by a
 * process that stopped, so the first send skips the preflight that would refuse them as already processed.
 */
export async function sendSigned(
  connection: Connection,
  raw: Buffer,
  lastValidBlockHeight: number,
  resumed = false,
): Promise<string | null> {
  const signature = await sendRaw(connection, raw, resumed)
  let lastSent = Date.now()
  for (let poll = 0; ; poll++) {
    const status = await rpcCall(connection, () => connection.getSignatureStatuses([signature]))
    const value = status.value[0]
    if (value?.err) throw transactionError(`the transaction failed: ${JSON.stringify(value.err)}`, [], value.err)
    if (value && (value.confirmationStatus === 'confirmed' || value.confirmationStatus === 'finalized')) {
      return signature
    }
    const height = await rpcCall(connection, () => connection.getBlockHeight('confirmed'))
    if (height > lastValidBlockHeight) break
    if (Date.now() - lastSent >= RESEND_MS) {
      await sendRaw(connection, raw, true)
      lastSent = Date.now()
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(STATUS_POLL_MS, FIRST_STATUS_POLL_MS * 2 ** poll)))
  }
  // Expired: these bytes can no longer land, unless they already did just now.
  const final = (await rpcCall(connection, () => connection.getSignatureStatuses([signature]))).value[0]
  if (final && !final.err) return signature
  return null
}

/** A transaction signed once and saved before it is sent: resent as it is while its blockhash is valid. */
export interface SignedOnce {
  /** The signed wire bytes, base64. */
  raw: string
  signature: string
  lastValidBlockHeight: number
}

/** Signs a prepared transaction once, with the blockhash it was prepared with: its bytes and signature known before it is sent. */
export function signOnce(prepared: PreparedTransaction): SignedOnce {
  const raw = signedTransaction(
    prepared.signers[0]!.publicKey,
    prepared.blockhash.blockhash,
    [...prepared.budget, ...prepared.instructions],
    signingKeys(prepared.signers),
  )
  // One signature count byte (under 128 signers), then the fee payer's signature: the transaction's id.
  return {
    raw: raw.toString('base64'),
    signature: bs58.encode(raw.subarray(1, 65)),
    lastValidBlockHeight: prepared.blockhash.lastValidBlockHeight,
  }
}

/** Sends saved bytes the first time (`resumed`: maybe again, after a process stopped): true once landed, false when they expired unlanded. */
export async function sendSignedOnce(connection: Connection, saved: SignedOnce, resumed = false): Promise<boolean> {
  return (await sendSigned(connection, Buffer.from(saved.raw, 'base64'), saved.lastValidBlockHeight, resumed)) !== null
}

/** What became of saved bytes a stopped process may have sent: landed (true), or expired unlanded (they never can now). */
export async function resendSaved(connection: Connection, saved: SignedOnce): Promise<boolean> {
  const height = await rpcCall(connection, () => connection.getBlockHeight('confirmed'))
  if (height > saved.lastValidBlockHeight) return false
  return sendSignedOnce(connection, saved, true)
}

/** Prepares and sends: the usual path when the fee need not be shown before a question. */
export async function sendJobsTransaction(
  connection: Connection,
  instructions: TransactionInstruction[],
  signers: Keypair[],
  policy: FeePolicy,
): Promise<{signature: string; fee: FeeQuote}> {
  const prepared = await prepareTransaction(connection, instructions, signers, policy)
  return {signature: await sendPrepared(connection, prepared), fee: prepared.fee}
}

/** The fee as `--json` prints it. */
export function feeJson(fee: FeeQuote): FeeJson {
  return {
    ...amountJson(fee.lamports, SOL_DECIMALS, 'SOL'),
    priority: amountJson(fee.priorityLamports, SOL_DECIMALS, 'SOL'),
    computeUnitPrice: fee.computeUnitPrice.toString(),
    computeUnitLimit: fee.computeUnitLimit,
  }
}

/** The fee as one line: "0.000015 SOL (priority 0.00001 SOL: 150 micro-lamports/CU x 66,000 CU)". */
export function feeText(fee: FeeQuote): string {
  const sol = (lamports: bigint) => `${formatAmount(lamports, SOL_DECIMALS)} SOL`
  if (fee.priorityLamports === 0n) return `${sol(fee.lamports)} (no priority fee)`
  const units = fee.computeUnitLimit === null ? '' : ` x ${fee.computeUnitLimit} CU`
  return `${sol(fee.lamports)} (priority ${sol(fee.priorityLamports)}: ${fee.computeUnitPrice} micro-lamports/CU${units})`
}

/**
 * The accounts a transaction writes, the fee payer first: where recent prioritization fees are looked up. A legacy
 * transaction holds about 35 accounts, well under the 128 the method takes.
 */
function writableAccounts(payer: PublicKey, instructions: TransactionInstruction[]): PublicKey[] {
  const seen = new Map([[payer.toBase58(), payer]])
  for (const ix of instructions)
    for (const key of ix.keys) if (key.isWritable) seen.set(key.pubkey.toBase58(), key.pubkey)
  return [...seen.values()]
}

/** The PRIORITY_FEE_PERCENTILE of recent prioritization fees over `accounts`, at least MIN_COMPUTE_UNIT_PRICE. */
async function recentPriorityFee(connection: Connection, accounts: PublicKey[]): Promise<bigint> {
  const recent = await rpcCall(connection, () =>
    connection.getRecentPrioritizationFees({lockedWritableAccounts: accounts}),
  )
  // Number() of a difference keeps its sign, which is all a comparator needs, however large the fees.
  const fees = recent.map((f) => BigInt(f.prioritizationFee)).sort((a, b) => Number(a - b))
  // floor(0.75 x n) is below n: always an index of the list, or none when it is empty.
  const fee = fees[Math.floor((PRIORITY_FEE_PERCENTILE / 100) * fees.length)] ?? 0n
  return fee > MIN_COMPUTE_UNIT_PRICE ? fee : MIN_COMPUTE_UNIT_PRICE
}

/** Simulates without signatures; returns the compute units used (0 when the node does not say), or throws. */
async function simulate(connection: Connection, payer: PublicKey, instructions: TransactionInstruction[]) {
  const message = new TransactionMessage({payerKey: payer, recentBlockhash: SIMULATION_BLOCKHASH, instructions})
  const tx = new VersionedTransaction(message.compileToLegacyMessage())
  const {value} = await rpcCall(connection, () =>
    connection.simulateTransaction(tx, {sigVerify: false, replaceRecentBlockhash: true, commitment: 'confirmed'}),
  )
  if (value.err) throw transactionError(`the transaction would fail: ${JSON.stringify(value.err)}`, value.logs ?? [])
  return value.unitsConsumed ?? 0
}

async function sendRaw(connection: Connection, raw: Buffer, skipPreflight: boolean): Promise<string> {
  try {
    return await connection.sendRawTransaction(raw, {skipPreflight, maxRetries: 0, preflightCommitment: 'confirmed'})
  } catch (error) {
    const logs = (error as {logs?: string[]}).logs
    if (logs === undefined && !/simulation failed/i.test((error as Error).message ?? '')) {
      throw rpcFailure(connection, error)
    }
    if (isGpunetError(error)) throw error
    // web3.js's own first line is only "Simulation failed."; the node's reason is in its transactionError.
    const reason = (error as {transactionError?: {message?: string}}).transactionError?.message
    throw transactionError(
      `the transaction failed: ${firstLine(reason ?? (error as Error).message)}`,
      logs ?? [],
      error,
    )
  }
}

/** The SPL token program's "insufficient funds" error. */
const TOKEN_INSUFFICIENT_FUNDS = /custom program error: 0x1$/m

/** A failed transaction: exit 4 when it lacked funds, else exit 5 with the program's last log lines as the hint. */
function transactionError(message: string, logs: string[], cause?: unknown): GpunetError {
  const text = [message, ...logs].join('\n')
  const poor =
    TOKEN_INSUFFICIENT_FUNDS.test(text) ||
    /insufficient (funds|lamports)|InsufficientFundsForFee|"Custom":1\}/i.test(text)
  return new GpunetError(poor ? 'insufficient_balance' : 'transaction_failed', message, {
    exitCode: poor ? ExitCode.INSUFFICIENT_BALANCE : ExitCode.UNAVAILABLE,
    cause,
    hint: logs.length > 0 ? `program logs: ${logs.slice(-3).join(' / ')}` : undefined,
  })
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim()
}
