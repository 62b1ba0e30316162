/**
 * The jobs program's instructions, executed with the checks the real program makes: signers and writable
 * accounts (checked in execute.ts), job and run states, the market queue, and token amounts into and out of
 * the vault. Each handler only reads and writes through the context, so a failure leaves nothing behind.
 */
import {PublicKey, SystemProgram} from '@solana/web3.js'

import {
  decodeJobAccount,
  decodeMarketAccount,
  decodeRunAccount,
  encodeJobAccount,
  encodeMarketAccount,
  encodeRunAccount,
  JobState,
  MARKET_QUEUE_LENGTH,
  QueueType,
  type JobAccount,
  type MarketAccount,
  type RunAccount,
} from '../../market/accounts.js'
import type {DecodedJobsInstruction} from '../../market/instructions.js'
import {findVaultAddress} from '../../market/pda.js'
import type {JobsContext} from './context.js'
import {AnchorError, fail, JobsError} from './errors.js'

type Handlers = {[I in DecodedJobsInstruction as I['name']]?: (ctx: JobsContext, args: I['args']) => void}

/** The instructions the localnet executes; the others fail with "not emulated". */
export const HANDLERS: Handlers = {
  open(ctx, args) {
    const [vault, bump] = findVaultAddress(ctx.programId, ctx.key('market'), ctx.key('mint'))
    if (!vault.equals(ctx.key('vault'))) fail(AnchorError.ConstraintSeeds, 'vault: not the PDA of [market, mint]')
    const market: MarketAccount = {
      authority: ctx.key('authority'),
      jobExpiration: args.jobExpiration,
      jobPrice: args.jobPrice,
      jobTimeout: args.jobTimeout,
      jobType: args.jobType,
      vault,
      vaultBump: bump,
      nodeAccessKey: ctx.key('accessKey'),
      nodeXnosMinimum: args.nodeXnosMinimum,
      queueType: QueueType.EMPTY,
      queue: [],
    }
    ctx.create('market', 'authority', ctx.programId, encodeMarketAccount(market))
    ctx.createTokenAccount('vault', 'authority', ctx.key('mint'), vault)
  },

  list(ctx, args) {
    const market = loadMarket(ctx)
    postJob(ctx, market, args.ipfsJob, args.timeout)
    if (market.queueType === QueueType.NODE) {
      startRun(ctx, ctx.key('job'), market.queue.shift()!)
      if (market.queue.length === 0) market.queueType = QueueType.EMPTY
    } else {
      if (market.queue.length >= MARKET_QUEUE_LENGTH) fail(JobsError.MarketInWrongState, 'the market queue is full')
      market.queue.push(ctx.key('job'))
      market.queueType = QueueType.JOB
      // No node is waiting: the program creates the run account and closes it again in the same instruction,
      // so its net effect is nothing.
    }
    ctx.store('market', encodeMarketAccount(market))
  },

  assign(ctx, args) {
    const market = loadMarket(ctx)
    postJob(ctx, market, args.ipfsJob, args.timeout)
    startRun(ctx, ctx.key('job'), ctx.key('node'))
  },

  delist(ctx) {
    const market = loadMarket(ctx)
    const job = loadJob(ctx)
    if (!job.project.equals(ctx.key('authority')))
      fail(JobsError.JobInvalidProject, "only the job's project can delist it")
    if (job.state !== JobState.QUEUED) fail(JobsError.JobInWrongState, 'the job is not queued')
    hasOne(job.payer, ctx.key('payer'), 'payer')
    const at = market.queue.findIndex((k) => k.equals(ctx.key('job')))
    if (market.queueType !== QueueType.JOB || at < 0)
      fail(JobsError.NotInMarketQueue, 'the job is not in the market queue')
    market.queue.splice(at, 1)
    if (market.queue.length === 0) market.queueType = QueueType.EMPTY
    ctx.store('market', encodeMarketAccount(market))
    payOut(ctx, 'deposit', job.payer, job.price * job.timeout)
    ctx.close('job', 'payer')
  },

  extend(ctx, args) {
    loadMarket(ctx)
    const job = loadJob(ctx)
    if (!job.project.equals(ctx.key('authority')))
      fail(JobsError.JobInvalidProject, "only the job's project can extend it")
    if (job.state !== JobState.QUEUED) fail(JobsError.JobInWrongState, 'the job is not queued or running')
    if (args.timeout <= job.timeout)
      fail(JobsError.JobTimeoutNotGreater, 'the new timeout must be larger than the current one')
    ctx.transferTokens('user', 'vault', ctx.key('payer'), job.price * (args.timeout - job.timeout))
    ctx.store('job', encodeJobAccount({...job, timeout: args.timeout}))
  },

  end(ctx) {
    loadMarket(ctx)
    const job = loadJob(ctx)
    if (!job.project.equals(ctx.key('authority')))
      fail(JobsError.JobInvalidProject, "only the job's project can end it")
    const run = loadRun(ctx, job)
    hasOne(run.payer, ctx.key('payer'), 'payer')
    settle(ctx, job, run, JobState.STOPPED, job.ipfsResult)
    ctx.close('run', 'payer')
  },

  work(ctx) {
    const market = loadMarket(ctx)
    checkNodeAccess(market)
    const node = ctx.key('authority')
    if (market.queueType === QueueType.JOB) {
      startRun(ctx, market.queue.shift()!, node)
      if (market.queue.length === 0) market.queueType = QueueType.EMPTY
    } else {
      if (market.queue.some((k) => k.equals(node)))
        fail(JobsError.NodeAlreadyQueued, 'the node is already in the queue')
      if (market.queue.length >= MARKET_QUEUE_LENGTH) fail(JobsError.MarketInWrongState, 'the market queue is full')
      market.queue.push(node)
      market.queueType = QueueType.NODE
    }
    ctx.store('market', encodeMarketAccount(market))
  },

  stop(ctx) {
    const market = loadMarket(ctx)
    const node = ctx.key('node')
    if (!node.equals(ctx.key('authority')))
      fail(AnchorError.ConstraintAddress, 'only the node itself can leave the queue')
    if (market.queueType !== QueueType.NODE)
      fail(JobsError.NodeQueueDoesNotMatch, 'the market queue does not hold nodes')
    const at = market.queue.findIndex((k) => k.equals(node))
    if (at < 0) fail(JobsError.NotInMarketQueue, 'the node is not in the market queue')
    market.queue.splice(at, 1)
    if (market.queue.length === 0) market.queueType = QueueType.EMPTY
    ctx.store('market', encodeMarketAccount(market))
  },

  claim(ctx) {
    const market = loadMarket(ctx)
    checkNodeAccess(market)
    const job = loadJob(ctx)
    if (job.state !== JobState.QUEUED) fail(JobsError.JobInWrongState, 'the job is not queued')
    // A job still in the queue goes to the next node that calls `work`; only a job a node quit can be claimed.
    if (market.queue.some((k) => k.equals(ctx.key('job'))))
      fail(JobsError.JobInWrongState, 'the job is waiting in the market queue')
    startRun(ctx, ctx.key('job'), ctx.key('authority'))
  },

  finish(ctx, args) {
    loadMarket(ctx)
    const job = loadJob(ctx)
    const run = loadRun(ctx, job)
    hasOne(run.node, ctx.key('authority'), 'authority')
    hasOne(job.payer, ctx.key('payerJob'), 'payerJob')
    hasOne(run.payer, ctx.key('payerRun'), 'payerRun')
    if (args.ipfsResult.every((b) => b === 0)) fail(JobsError.JobResultNull, 'the job result can not be empty')
    settle(ctx, job, run, JobState.DONE, args.ipfsResult)
    ctx.close('run', 'payerRun')
  },

  quit(ctx) {
    const job = ctx.load('job', decodeJobAccount)
    const run = loadRun(ctx, job)
    hasOne(run.node, ctx.key('authority'), 'authority')
    hasOne(run.payer, ctx.key('payer'), 'payer')
    ctx.close('run', 'payer')
  },
}

/** The market, and its vault when the instruction takes one (Anchor's `has_one = vault`). */
function loadMarket(ctx: JobsContext): MarketAccount {
  const market = ctx.load('market', decodeMarketAccount)
  if (ctx.has('vault')) hasOne(market.vault, ctx.key('vault'), 'vault')
  return market
}

/** A job of the market passed to the instruction. */
function loadJob(ctx: JobsContext): JobAccount {
  const job = ctx.load('job', decodeJobAccount)
  if (!job.market.equals(ctx.key('market'))) fail(JobsError.InvalidMarketAccount, 'the job belongs to another market')
  return job
}

/** The run of a running job: it must point at this job, and the job must still be queued (running). */
function loadRun(ctx: JobsContext, job: JobAccount): RunAccount {
  const run = ctx.load('run', decodeRunAccount)
  if (!run.job.equals(ctx.key('job'))) fail(JobsError.JobInvalidRunAccount, 'the run account is not for this job')
  if (job.state !== JobState.QUEUED) fail(JobsError.JobInWrongState, 'the job is not running')
  return run
}

function hasOne(expected: PublicKey, passed: PublicKey, name: string): void {
  if (!expected.equals(passed)) fail(AnchorError.ConstraintHasOne, `${name}: does not match the account's ${name}`)
}

/** Creates the job account and takes its deposit (`price * timeout`) from the payer's token account. */
function postJob(ctx: JobsContext, market: MarketAccount, ipfsJob: Uint8Array, timeout: bigint): void {
  if (timeout <= 0n) fail(AnchorError.ConstraintRaw, 'the timeout must be positive')
  if (ipfsJob.every((b) => b === 0)) fail(JobsError.InvalidJobAccount, 'the job definition hash can not be empty')
  const job: JobAccount = {
    ipfsJob,
    ipfsResult: new Uint8Array(32),
    market: ctx.key('market'),
    node: PublicKey.default,
    payer: ctx.key('payer'),
    price: market.jobPrice,
    project: ctx.key('authority'),
    state: JobState.QUEUED,
    timeEnd: 0n,
    timeStart: 0n,
    timeout,
  }
  ctx.create('job', 'payer', ctx.programId, encodeJobAccount(job))
  ctx.transferTokens('user', 'vault', ctx.key('payer'), market.jobPrice * timeout)
}

/** Creates the run account of `job` starting now on `node`, paid by the instruction's payer. */
function startRun(ctx: JobsContext, job: PublicKey, node: PublicKey): void {
  ctx.create(
    'run',
    'payer',
    ctx.programId,
    encodeRunAccount({job, node, payer: ctx.key('payer'), state: 0, time: ctx.now}),
  )
}

/** Pays the node for the time it ran (at most the timeout), refunds the rest of the deposit and closes the job. */
function settle(ctx: JobsContext, job: JobAccount, run: RunAccount, state: number, ipfsResult: Uint8Array): void {
  const elapsed = ctx.now - run.time
  const billed = elapsed < 0n ? 0n : elapsed > job.timeout ? job.timeout : elapsed
  const earned = job.price * billed
  payOut(ctx, 'user', run.node, earned)
  payOut(ctx, 'deposit', job.payer, job.price * job.timeout - earned)
  ctx.store('job', encodeJobAccount({...job, state, ipfsResult, node: run.node, timeStart: run.time, timeEnd: ctx.now}))
}

/** Pays tokens out of the vault (signed by the vault PDA) into a token account that must belong to `owner`. */
function payOut(ctx: JobsContext, name: string, owner: PublicKey, amount: bigint): void {
  const account = ctx.tokenAccount(name)
  if (!account.owner.equals(owner))
    fail(AnchorError.ConstraintTokenOwner, `${name}: the token account does not belong to ${owner.toBase58()}`)
  ctx.transferTokens('vault', name, ctx.key('vault'), amount)
}

/** Markets open to any node have the system program as access key and no stake minimum. */
function checkNodeAccess(market: MarketAccount): void {
  if (!market.nodeAccessKey.equals(SystemProgram.programId)) {
    fail(JobsError.NodeKeyInvalidCollection, 'this market requires an access NFT, which the localnet does not emulate')
  }
  if (market.nodeXnosMinimum > 0n)
    fail(JobsError.NodeNotEnoughStake, 'this market requires a stake, which the localnet does not emulate')
}
