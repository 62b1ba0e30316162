/**
 * What several of the jobs program's instructions share (reference/jobs-program-constraints.md section 4): the
 * shape of an instruction, the account shorthands, the program's overflow panics, queue mechanics, the run and
 * job a handler fills in, deposits and their settlement, and the constraints more than one account struct repeats.
 */
import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {type PublicKey, SystemProgram} from '@solana/web3.js'

import {
  encodeRunAccount,
  type JobAccount,
  JobState,
  type MarketAccount,
  QueueType,
  type RunAccount,
} from '../../market/codec/accounts.js'
import type {DecodedJobsInstruction, JobsInstructionName} from '../../market/codec/instructions.js'
import {findStakeAddress} from '../../market/codec/pda.js'
import {ACCOUNT_SPACE, type AccountDecl, type Loaded, require} from './accounts.js'
import type {JobsContext} from './context.js'
import {fail, failRuntime, JobsError, NosanaError, StakingError} from './errors.js'
import {findMetadataAddress, verifiedCollection} from './foreign.js'

/** The decoded arguments of instruction `N`. */
export type Args<N extends JobsInstructionName> = Extract<DecodedJobsInstruction, {name: N}>['args']

/** One instruction: its accounts as the program declares them, and its handler. */
export interface InstructionDef<N extends JobsInstructionName = JobsInstructionName> {
  accounts: AccountDecl[]
  handler(a: Loaded, args: Args<N>): void
}

const U64_MAX = 2n ** 64n - 1n
const I64_MAX = 2n ** 63n - 1n
/** `job_type` 255 (Unknown) turns queueing off. */
export const JOB_TYPE_UNKNOWN = 255

/** A declared `mut` account. */
export const mut = (name: string, kind: AccountDecl['kind'], more: Partial<AccountDecl> = {}): AccountDecl => ({
  name,
  kind,
  mut: true,
  ...more,
})

/** A declared account, read-only unless `more` says otherwise. */
export const ro = (name: string, kind: AccountDecl['kind'], more: Partial<AccountDecl> = {}): AccountDecl => ({
  name,
  kind,
  ...more,
})

/** The programs an instruction calls, each checked against its address. */
export const tokenProgram = ro('tokenProgram', 'tokenProgram')
export const systemProgram = ro('systemProgram', 'systemProgram')
export const rewardsProgram = ro('rewardsProgram', 'rewardsProgram')

/** Whether an IPFS hash is all zero bytes (the program's "no result"). */
export const isZero = (bytes: Uint8Array) => bytes.every((b) => b === 0)

/** The associated token account of `owner` for the program's token (classic SPL token program). */
function ata(ctx: JobsContext, owner: PublicKey): PublicKey {
  return getAssociatedTokenAddressSync(ctx.ids.tokenMint, owner, true)
}

/** Overflow checks are on in the release build: an out-of-range value aborts the instruction. */
export function u64(value: bigint, what: string): bigint {
  if (value < 0n || value > U64_MAX) failRuntime('ProgramFailedToComplete', `Program panicked: ${what} out of range`)
  return value
}

/** The i64 counterpart of `u64`, with the panic message the program's checked arithmetic gives. */
export function i64(value: bigint, what: string): bigint {
  if (value < -I64_MAX - 1n || value > I64_MAX)
    failRuntime('ProgramFailedToComplete', `Program panicked: ${what} overflowed`)
  return value
}

/** `price × timeout`, panicking as the program does on a negative timeout or an overflow. */
export function deposit(price: bigint, timeout: bigint): bigint {
  return u64(price * u64(timeout, 'timeout'), 'deposit')
}

/** Appends to the queue (`add_to_queue`): nothing when the market's job type is Unknown. */
export function addToQueue(market: MarketAccount, key: PublicKey, type: number): void {
  if (market.jobType === JOB_TYPE_UNKNOWN) return
  if (market.queueType === QueueType.EMPTY) market.queueType = type
  market.queue.push(key)
}

/** Takes the queue's head; the queue's type goes with its last entry. */
export function popFirst(market: MarketAccount): PublicKey {
  if (market.queue.length === 1) market.queueType = QueueType.EMPTY
  return market.queue.shift()!
}

/** Takes `key` out of the queue (`NotInMarketQueue` when absent). */
export function removeFromQueue(market: MarketAccount, key: PublicKey): void {
  const at = market.queue.findIndex((k) => k.equals(key))
  if (at < 0) fail(JobsError.NotInMarketQueue)
  market.queue.splice(at, 1)
  if (market.queue.length === 0) market.queueType = QueueType.EMPTY
}

/** `list`/`work` take a fresh run key even when they create no run. */
export function freshRun(a: Loaded): void {
  const meta = a.meta('run')
  require(meta.isSigner, NosanaError.MissingSignature, 'run')
  require(a.ctx.get(meta.pubkey) === null, NosanaError.LamportsNonNull, 'run')
  // An account with no lamports does not exist, so it is the system program's.
}

/** A run of `node` on `job`, paid by `payer`, started now: every field the program sets, `state` left 0. */
function runFields(a: Loaded, job: PublicKey, node: PublicKey): RunAccount {
  return {job, node, payer: a.key('payer'), state: 0, time: a.ctx.now}
}

/** Fills the run account `init` made (`assign`, `claim`). */
export function fillRun(a: Loaded, job: PublicKey, node: PublicKey): void {
  Object.assign(a.run(), runFields(a, job, node))
}

/** The run account `list`/`work` create themselves (System create_account, then the fields). */
export function createRun(a: Loaded, job: PublicKey, node: PublicKey): void {
  const {ctx} = a
  ctx.createAccount(a.meta('run'), a.meta('payer'), ACCOUNT_SPACE.run, ctx.programId)
  ctx.store(a.key('run'), padded(encodeRunAccount(runFields(a, job, node)), ACCOUNT_SPACE.run))
}

function padded(data: Buffer, space: number): Buffer {
  return data.length >= space ? data.subarray(0, space) : Buffer.concat([data, Buffer.alloc(space - data.length)])
}

/** A new job's fields (`list`, `assign`). */
export function newJob(a: Loaded, ipfsJob: Uint8Array, timeout: bigint): void {
  const job = a.job()
  Object.assign(job, {
    ipfsJob,
    market: a.key('market'),
    payer: a.key('payer'),
    price: a.market().jobPrice,
    project: a.key('authority'),
    state: JobState.QUEUED,
    timeout,
  } satisfies Partial<JobAccount>)
}

/** Takes the job's deposit from `user` (`list`, `assign`): nothing at price 0. */
export function takeDeposit(a: Loaded): void {
  const job = a.job()
  if (job.price === 0n) return
  a.ctx.transferTokens(a.key('user'), a.key('vault'), a.key('payer'), deposit(job.price, job.timeout))
}

/**
 * `user` must be ATA(payer) when the market charges (`list`, `assign`): the market's price, since the job these
 * create is only filled in by the handler.
 */
export const payerAta = (a: Loaded) =>
  require(a.market().jobPrice === 0n ||
    a.key('user').equals(ata(a.ctx, a.key('payer'))), NosanaError.InvalidATA, 'user')

/** Checks that token account `name` is ATA(`owner`) unless the job is free (`InvalidATA`). */
export const jobAta =
  (name: string, owner: (a: Loaded) => PublicKey) =>
  (a: Loaded): void =>
    require(a.job().price === 0n || a.key(name).equals(ata(a.ctx, owner(a))), NosanaError.InvalidATA, name)

/** `has_one = vault`: the market's own vault. */
export const hasVault = (a: Loaded) =>
  require(a.market().vault.equals(a.key('vault')), NosanaError.InvalidVault, 'market')

/** `has_one = authority` on the market: only its authority may change or close it. */
export const marketAuthority = (a: Loaded) =>
  require(a.market().authority.equals(a.key('authority')), NosanaError.Unauthorized, 'market')

/** The `*_admin` instructions: the signer must be the build's `MARKET_ADMIN`. */
export function adminOnly(a: Loaded): void {
  require(a.key('authority').equals(a.ctx.ids.marketAdmin), NosanaError.Unauthorized, 'authority')
}

/** `has_one = market` on the job: it was posted in the market passed. */
export const jobInMarket = (a: Loaded) =>
  require(a.job().market.equals(a.key('market')), JobsError.InvalidMarketAccount, 'job')

/** The project's own job in the market passed: `jobInMarket`, then the project must be the signing `authority`. */
export function projectsJob(a: Loaded): void {
  jobInMarket(a)
  require(a.job().project.equals(a.key('authority')), NosanaError.Unauthorized, 'job')
}

/** Checks of the job `delist` and `recover` close: its payer, `projectsJob`, then the state they need. */
export const closedByProject = (state: number) => (a: Loaded) => {
  const job = a.job()
  require(job.payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'job')
  projectsJob(a)
  require(job.state === state, JobsError.JobInWrongState, 'job')
}

/** Checks of the node's own run that `finish` and `quit` close: its job, its payer (passed as `payer`), its node. */
export const nodeRun = (payer: string) => (a: Loaded) => {
  const run = a.run()
  require(run.job.equals(a.key('job')), JobsError.InvalidJobAccount, 'run')
  require(run.payer.equals(a.key(payer)), NosanaError.InvalidPayer, 'run')
  require(run.node.equals(a.key('authority')), NosanaError.Unauthorized, 'run')
}

/** A node's stake: its authority, the market's minimum, then the PDA address (in that order). */
const stakeChecks = (a: Loaded) => {
  const stake = a.stake()
  require(stake.authority.equals(a.key('authority')), NosanaError.Unauthorized, 'stake')
  require(stake.xnos >= a.market().nodeXnosMinimum, JobsError.NodeNotEnoughStake, 'stake')
  require(a
    .key('stake')
    .equals(findStakeAddress(a.ctx.ids.tokenMint, a.key('authority'))), StakingError.InvalidStakeAccount, 'stake')
}

const gated = (a: Loaded) => !a.market().nodeAccessKey.equals(SystemProgram.programId)

const nftChecks = (a: Loaded) => {
  if (!gated(a)) return
  const nft = a.token('nft')
  require(nft.owner.equals(a.key('authority')), JobsError.NodeNftWrongOwner, 'nft')
  require(nft.amount >= 1n, JobsError.NodeNftInvalidAmount, 'nft')
}

const metadataChecks = (a: Loaded) => {
  if (!gated(a)) return
  const metadata = a.key('metadata')
  const data = a.ctx.get(metadata)?.data
  const collection =
    metadata.equals(findMetadataAddress(a.token('nft').mint)) && data && data.length > 0
      ? verifiedCollection(data)
      : null
  require(collection?.equals(a.market().nodeAccessKey) ?? false, JobsError.NodeKeyInvalidCollection, 'metadata')
}

/** What a node shows to `work` or `claim`: its stake, and on a gated market its access NFT and its metadata. */
export const nodeGateAccounts = [
  ro('stake', 'stake', {checks: stakeChecks}),
  ro('nft', 'token', {checks: nftChecks}),
  ro('metadata', 'unchecked', {checks: metadataChecks}),
]

/** Pays the node for its time (capped at the timeout) and refunds the rest to the job's payer (`finish`, `end`). */
export function settle(a: Loaded): void {
  const job = a.job()
  if (job.price === 0n) return
  const total = deposit(job.price, job.timeout)
  const elapsed = i64(job.timeEnd - job.timeStart, 'elapsed time')
  const paid = u64(job.price * u64(elapsed < job.timeout ? elapsed : job.timeout, 'billed time'), 'payment')
  const vault = a.key('vault')
  a.ctx.transferTokens(vault, a.key('user'), vault, paid)
  a.ctx.transferTokens(vault, a.key('deposit'), vault, u64(total - paid, 'refund'))
}

/** Empties the market's vault into `user` and closes it (`close`, `close_admin`). */
export function closeMarket(a: Loaded): void {
  const vault = a.key('vault')
  a.ctx.transferTokens(vault, a.key('user'), vault, a.token('vault').amount)
  a.ctx.closeTokenAccount(vault, a.key('authority'))
}
