/**
 * Runs one jobs program instruction in Anchor 1.0's phases (reference section 3.2): arguments, account loading,
 * `init` accounts, the duplicate-mutable-account check, constraints, the handler, then exit (close, write back).
 * The first failing check decides the error, as on chain.
 */
import {
  encodeJobAccount,
  encodeMarketAccount,
  encodeRunAccount,
  type JobAccount,
  type MarketAccount,
  type RunAccount,
} from '../../market/codec/accounts.js'
import {decodeJobsInstructionData} from '../../market/codec/instructions.js'
import {findVaultAddress} from '../../market/codec/pda.js'
import type {Overlay} from '../chain/ledger.js'
import {ACCOUNT_SPACE, type AccountDecl, Loaded, type ProgramAccountType, rustName, zeroed} from './accounts.js'
import {type InstructionAccount, JobsContext, type JobsProgramIds} from './context.js'
import {AnchorError, fail} from './errors.js'
import {INSTRUCTIONS, type InstructionDef} from './instructions.js'

export interface JobsInstructionInput {
  ids: JobsProgramIds
  accounts: InstructionAccount[]
  data: Uint8Array
  ledger: Overlay
  now: bigint
  rentExempt: (size: number) => bigint
  log: (line: string) => void
}

/** Account types whose Borsh content the exit phase writes back, and its length. */
const SERIALIZERS: Record<ProgramAccountType, [(value: never) => Buffer, (value: never) => number]> = {
  job: [(v: JobAccount) => encodeJobAccount(v), () => 233],
  run: [(v: RunAccount) => encodeRunAccount(v), () => 113],
  market: [(v: MarketAccount) => encodeMarketAccount(v), (v: MarketAccount) => 151 + 32 * v.queue.length],
}

/** Executes the instruction against the overlay; throws InstructionFailure with the program's error. */
export function executeJobsInstruction(input: JobsInstructionInput): void {
  let decoded
  try {
    decoded = decodeJobsInstructionData(input.data)
  } catch {
    fail(AnchorError.InstructionDidNotDeserialize)
  }
  if (!decoded) fail(AnchorError.InstructionFallbackNotFound)
  input.log(`Program log: Instruction: ${decoded.name[0]!.toUpperCase()}${decoded.name.slice(1)}`)
  const def = INSTRUCTIONS[decoded.name] as InstructionDef
  if (input.accounts.length < def.accounts.length) fail(AnchorError.AccountNotEnoughKeys)
  const named = new Map(def.accounts.map((decl, i) => [decl.name, input.accounts[i]!]))
  const ctx = new JobsContext(input.ids, input.ledger, named, input.accounts, input.now, input.rentExempt, input.log)
  const a = new Loaded(ctx, def.accounts, named)

  a.load()
  for (const decl of def.accounts) initialize(a, decl)
  checkDuplicates(a, def.accounts)
  for (const decl of def.accounts) {
    if (decl.init || decl.initVault) continue
    if (decl.mut && !a.meta(decl.name).isWritable) fail(AnchorError.ConstraintMut, rustName(decl.name))
    decl.checks?.(a)
    if (decl.close && a.key(decl.name).equals(a.key(decl.close))) fail(AnchorError.ConstraintClose, rustName(decl.name))
  }
  def.handler(a, decoded.args as never)
  for (const decl of def.accounts) exit(a, decl)
}

/** Phase 3: `init` accounts are created (System program) and checked. */
function initialize(a: Loaded, decl: AccountDecl): void {
  const {ctx} = a
  const meta = a.meta(decl.name)
  if (decl.initVault) {
    const {payer, market, mint} = decl.initVault
    const [vault] = findVaultAddress(ctx.programId, a.key(market), a.key(mint))
    if (!vault.equals(meta.pubkey)) fail(AnchorError.ConstraintSeeds, rustName(decl.name))
    ctx.createTokenAccount(meta, a.meta(payer), a.key(mint), vault)
    return
  }
  if (!decl.init) return
  const kind = decl.kind as ProgramAccountType
  const payer = a.meta(decl.init.payer)
  if (ctx.get(meta.pubkey) && meta.pubkey.equals(payer.pubkey))
    fail(AnchorError.TryingToInitPayerAsProgramAccount, rustName(decl.name))
  ctx.createAccount(meta, payer, ACCOUNT_SPACE[kind], ctx.programId)
  if (!meta.isWritable) fail(AnchorError.ConstraintMut, rustName(decl.name))
  if (!meta.isSigner) fail(AnchorError.ConstraintSigner, rustName(decl.name))
  a.initialize(decl.name, zeroed(kind))
}

/** Phase 4: mutable program and token accounts (not `init`, not `dup`) must be distinct. */
function checkDuplicates(a: Loaded, decls: readonly AccountDecl[]): void {
  const typed = new Set(['job', 'run', 'market', 'token', 'mint', 'stake', 'reflection'])
  const keys = decls
    .filter((d) => d.mut && !d.init && !d.initVault && !d.dup && typed.has(d.kind))
    .map((d) => a.key(d.name).toBase58())
  if (new Set(keys).size !== keys.length) fail(AnchorError.ConstraintDuplicateMutableAccount)
}

/** Phase 7: `close` accounts are closed; other mutable program accounts get their Borsh content written back. */
function exit(a: Loaded, decl: AccountDecl): void {
  const {ctx} = a
  const key = a.key(decl.name)
  if (decl.close) {
    ctx.close(key, a.key(decl.close))
    return
  }
  if (!decl.mut || !(decl.kind in SERIALIZERS)) return
  const state = ctx.get(key)
  if (!state) return
  const kind = decl.kind as ProgramAccountType
  const value = (kind === 'job' ? a.job(decl.name) : kind === 'run' ? a.run(decl.name) : a.market(decl.name)) as never
  const [encode, contentLength] = SERIALIZERS[kind]
  const length = contentLength(value)
  if (length > state.data.length) fail(AnchorError.AccountDidNotSerialize, rustName(decl.name))
  // Anchor serializes over the data from its start: the bytes past the content stay as they were (reference 2.1),
  // such as the keys a shorter queue no longer covers.
  ctx.store(key, Buffer.concat([encode(value).subarray(0, length), state.data.subarray(length)]))
}
