/**
 * The jobs program's 19 instructions as the deployed program declares and runs them
 * (reference/jobs-program-constraints.md section 4): each account in the program's order with its declared
 * type, `mut`, `init`, `close` and constraints (with their errors, in the program's order), and the handler's
 * effects. execute.ts runs them in Anchor's phases.
 */
import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {PublicKey, SystemProgram} from '@solana/web3.js'

import {
  encodeRunAccount,
  type JobAccount,
  JobState,
  type MarketAccount,
  QueueType,
  type RunAccount,
} from '../../market/accounts.js'
import type {DecodedJobsInstruction, JobsInstructionName} from '../../market/instructions.js'
import {findStakeAddress, findVaultAddress} from '../../market/pda.js'
import {ACCOUNT_SPACE, type AccountDecl, type Loaded, require} from './accounts.js'
import type {JobsContext} from './context.js'
import {fail, failRuntime, JobsError, NosanaError, StakingError} from './errors.js'
import {findMetadataAddress, verifiedCollection} from './foreign.js'

type Args<N extends JobsInstructionName> = Extract<DecodedJobsInstruction, {name: N}>['args']

/** One instruction: its accounts as the program declares them, and its handler. */
export interface InstructionDef<N extends JobsInstructionName = JobsInstructionName> {
  accounts: AccountDecl[]
  handler(a: Loaded, args: Args<N>): void
}

const ZERO = new Uint8Array(32)
const U64_MAX = 2n ** 64n - 1n
const I64_MAX = 2n ** 63n - 1n
/** `job_type` 255 (Unknown) turns queueing off. */
const JOB_TYPE_UNKNOWN = 255

// Declared account shorthands.
const mut = (name: string, kind: AccountDecl['kind'], more: Partial<AccountDecl> = {}): AccountDecl => ({
  name,
  kind,
  mut: true,
  ...more,
})
const ro = (name: string, kind: AccountDecl['kind'], more: Partial<AccountDecl> = {}): AccountDecl => ({
  name,
  kind,
  ...more,
})
const tokenProgram = ro('tokenProgram', 'tokenProgram')
const systemProgram = ro('systemProgram', 'systemProgram')
const rewardsProgram = ro('rewardsProgram', 'rewardsProgram')

const isZero = (bytes: Uint8Array) => bytes.every((b) => b === 0)

/** The associated token account of `owner` for the program's token (classic SPL token program). */
function ata(ctx: JobsContext, owner: PublicKey): PublicKey {
  return getAssociatedTokenAddressSync(ctx.ids.tokenMint, owner, true)
}

/** Overflow checks are on in the release build: an out-of-range value aborts the instruction. */
function u64(value: bigint, what: string): bigint {
  if (value < 0n || value > U64_MAX) failRuntime('ProgramFailedToComplete', `Program panicked: ${what} out of range`)
  return value
}

function i64(value: bigint, what: string): bigint {
  if (value < -I64_MAX - 1n || value > I64_MAX)
    failRuntime('ProgramFailedToComplete', `Program panicked: ${what} overflowed`)
  return value
}

/** `price × timeout`, panicking as the program does on a negative timeout or an overflow. */
function deposit(price: bigint, timeout: bigint): bigint {
  return u64(price * u64(timeout, 'timeout'), 'deposit')
}

/** Appends to the queue (`add_to_queue`): nothing when the market's job type is Unknown. */
function addToQueue(market: MarketAccount, key: PublicKey, type: number): void {
  if (market.jobType === JOB_TYPE_UNKNOWN) return
  if (market.queueType === QueueType.EMPTY) market.queueType = type
  market.queue.push(key)
}

function popFirst(market: MarketAccount): PublicKey {
  if (market.queue.length === 1) market.queueType = QueueType.EMPTY
  return market.queue.shift()!
}

function removeFromQueue(market: MarketAccount, key: PublicKey): void {
  const at = market.queue.findIndex((k) => k.equals(key))
  if (at < 0) fail(JobsError.NotInMarketQueue)
  market.queue.splice(at, 1)
  if (market.queue.length === 0) market.queueType = QueueType.EMPTY
}

/** `list`/`work` take a fresh run key even when they create no run. */
function freshRun(a: Loaded): void {
  const meta = a.meta('run')
  require(meta.isSigner, NosanaError.MissingSignature, 'run')
  require(a.ctx.get(meta.pubkey) === null, NosanaError.LamportsNonNull, 'run')
  // An account with no lamports does not exist, so it is the system program's.
}

/** The run account `list`/`work` create themselves (System create_account, then the fields). */
function createRun(a: Loaded, job: PublicKey, node: PublicKey): void {
  const {ctx} = a
  ctx.createAccount(a.meta('run'), a.meta('payer'), ACCOUNT_SPACE.run, ctx.programId)
  const run: RunAccount = {job, node, payer: a.key('payer'), state: 0, time: ctx.now}
  ctx.store(a.key('run'), padded(encodeRunAccount(run), ACCOUNT_SPACE.run))
}

function padded(data: Buffer, space: number): Buffer {
  return data.length >= space ? data.subarray(0, space) : Buffer.concat([data, Buffer.alloc(space - data.length)])
}

/** A new job's fields (`list`, `assign`). */
function newJob(a: Loaded, ipfsJob: Uint8Array, timeout: bigint): void {
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
function takeDeposit(a: Loaded): void {
  const job = a.job()
  if (job.price === 0n) return
  a.ctx.transferTokens(a.key('user'), a.key('vault'), a.key('payer'), deposit(job.price, job.timeout))
}

/** `user` must be ATA(payer) when the market charges (`list`, `assign`). */
const payerAta = (a: Loaded) =>
  require(a.market().jobPrice === 0n ||
    a.key('user').equals(ata(a.ctx, a.key('payer'))), NosanaError.InvalidATA, 'user')

const hasVault = (a: Loaded) => require(a.market().vault.equals(a.key('vault')), NosanaError.InvalidVault, 'market')

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

const nodeGateAccounts = [ro('stake', 'stake', {checks: stakeChecks}), ro('nft', 'token', {checks: nftChecks})]

/** Pays the node for its time (capped at the timeout) and refunds the rest to the job's payer (`finish`, `end`). */
function settle(a: Loaded): void {
  const job = a.job()
  if (job.price === 0n) return
  const total = deposit(job.price, job.timeout)
  const elapsed = i64(job.timeEnd - job.timeStart, 'elapsed time')
  const paid = u64(job.price * u64(elapsed < job.timeout ? elapsed : job.timeout, 'billed time'), 'payment')
  const vault = a.key('vault')
  a.ctx.transferTokens(vault, a.key('user'), vault, paid)
  a.ctx.transferTokens(vault, a.key('deposit'), vault, u64(total - paid, 'refund'))
}

function closeMarket(a: Loaded): void {
  const vault = a.key('vault')
  a.ctx.transferTokens(vault, a.key('user'), vault, a.token('vault').amount)
  a.ctx.closeTokenAccount(vault, a.key('authority'))
}

/** The program, instruction by instruction, in the order of reference section 4. */
export const INSTRUCTIONS: {[N in JobsInstructionName]: InstructionDef<N>} = {
  open: {
    accounts: [
      ro('mint', 'mint', {
        checks: (a) => require(a.key('mint').equals(a.ctx.ids.tokenMint), NosanaError.InvalidMint, 'mint'),
      }),
      ro('market', 'market', {mut: true, init: {payer: 'authority'}}),
      ro('vault', 'token', {mut: true, initVault: {payer: 'authority', market: 'market', mint: 'mint'}}),
      mut('authority', 'signer'),
      ro('accessKey', 'unchecked'),
      ro('rent', 'rent'),
      systemProgram,
      tokenProgram,
    ],
    handler(a, args) {
      const [vault, bump] = findVaultAddress(a.ctx.programId, a.key('market'), a.key('mint'))
      Object.assign(a.market(), {
        authority: a.key('authority'),
        jobExpiration: args.jobExpiration,
        jobPrice: args.jobPrice,
        jobTimeout: args.jobTimeout,
        jobType: args.jobType <= 4 ? args.jobType : JOB_TYPE_UNKNOWN,
        vault,
        vaultBump: bump,
        nodeAccessKey: a.key('accessKey'),
        nodeXnosMinimum: args.nodeXnosMinimum,
        queueType: QueueType.EMPTY,
        queue: [],
      } satisfies MarketAccount)
    },
  },

  update: {
    accounts: [
      mut('market', 'market', {
        checks: (a) => require(a.market().authority.equals(a.key('authority')), NosanaError.Unauthorized, 'market'),
      }),
      ro('accessKey', 'unchecked'),
      ro('authority', 'signer'),
    ],
    handler(a, args) {
      Object.assign(a.market(), {
        jobExpiration: args.jobExpiration,
        jobPrice: args.jobPrice,
        jobType: args.jobType,
        nodeAccessKey: a.key('accessKey'),
        nodeXnosMinimum: args.nodeStakeMinimum,
        jobTimeout: args.jobTimeout,
      } satisfies Partial<MarketAccount>)
    },
  },

  close: {
    accounts: [
      mut('market', 'market', {
        close: 'authority',
        checks: (a) => {
          require(a.market().authority.equals(a.key('authority')), NosanaError.Unauthorized, 'market')
          hasVault(a)
        },
      }),
      mut('vault', 'token'),
      mut('user', 'token'),
      ro('authority', 'signer'),
      tokenProgram,
    ],
    handler: closeMarket,
  },

  closeAdmin: {
    accounts: [
      mut('market', 'market', {close: 'authority', checks: hasVault}),
      mut('vault', 'token'),
      mut('user', 'token'),
      ro('authority', 'signer', {
        checks: (a) => require(a.key('authority').equals(a.ctx.ids.marketAdmin), NosanaError.Unauthorized, 'authority'),
      }),
      tokenProgram,
    ],
    handler: closeMarket,
  },

  assign: {
    accounts: [
      mut('job', 'job', {init: {payer: 'payer'}}),
      mut('market', 'market', {
        checks: (a) => {
          hasVault(a)
          require(a.market().queueType === QueueType.NODE, JobsError.MarketInWrongState, 'market')
        },
      }),
      mut('run', 'run', {init: {payer: 'payer'}}),
      ro('node', 'unchecked'),
      mut('user', 'token', {checks: payerAta}),
      mut('vault', 'token'),
      mut('payer', 'signer'),
      mut('rewardsReflection', 'reflection'),
      mut('rewardsVault', 'token'),
      ro('authority', 'signer'),
      rewardsProgram,
      tokenProgram,
      systemProgram,
    ],
    handler(a, args) {
      removeFromQueue(a.market(), a.key('node'))
      newJob(a, args.ipfsJob, args.timeout)
      Object.assign(a.run(), {job: a.key('job'), node: a.key('node'), payer: a.key('payer'), time: a.ctx.now})
      takeDeposit(a)
    },
  },

  list: {
    accounts: [
      mut('job', 'job', {init: {payer: 'payer'}}),
      mut('market', 'market', {checks: hasVault}),
      mut('run', 'unchecked', {checks: freshRun}),
      mut('user', 'token', {checks: payerAta}),
      mut('vault', 'token'),
      mut('payer', 'signer'),
      mut('rewardsReflection', 'reflection'),
      mut('rewardsVault', 'token'),
      ro('authority', 'signer'),
      rewardsProgram,
      tokenProgram,
      systemProgram,
    ],
    handler(a, args) {
      newJob(a, args.ipfsJob, args.timeout)
      const market = a.market()
      if (market.queueType === QueueType.NODE) createRun(a, a.key('job'), popFirst(market))
      else addToQueue(market, a.key('job'), QueueType.JOB)
      takeDeposit(a)
    },
  },

  delist: {
    accounts: [
      mut('job', 'job', {
        close: 'payer',
        checks: (a) => {
          const job = a.job()
          require(job.payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'job')
          require(job.market.equals(a.key('market')), JobsError.InvalidMarketAccount, 'job')
          require(job.project.equals(a.key('authority')), NosanaError.Unauthorized, 'job')
          require(job.state === JobState.QUEUED, JobsError.JobInWrongState, 'job')
        },
      }),
      mut('market', 'market', {
        checks: (a) => {
          hasVault(a)
          require(a.market().queueType === QueueType.JOB, JobsError.MarketInWrongState, 'market')
        },
      }),
      mut('deposit', 'token', {
        checks: (a) =>
          require(a.job().price === 0n ||
            a.key('deposit').equals(ata(a.ctx, a.key('payer'))), NosanaError.InvalidATA, 'deposit'),
      }),
      mut('payer', 'unchecked'),
      mut('vault', 'token'),
      tokenProgram,
      mut('authority', 'signer'),
    ],
    handler(a) {
      removeFromQueue(a.market(), a.key('job'))
      const job = a.job()
      if (job.price === 0n) return
      const vault = a.key('vault')
      a.ctx.transferTokens(vault, a.key('deposit'), vault, deposit(job.price, job.timeout))
    },
  },

  recover: {
    accounts: [
      mut('job', 'job', {
        close: 'payer',
        checks: (a) => {
          const job = a.job()
          require(job.payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'job')
          require(job.market.equals(a.key('market')), JobsError.InvalidMarketAccount, 'job')
          require(job.project.equals(a.key('authority')), NosanaError.Unauthorized, 'job')
          require(job.state === JobState.STOPPED, JobsError.JobInWrongState, 'job')
        },
      }),
      ro('market', 'market', {checks: hasVault}),
      mut('vault', 'token'),
      mut('user', 'token'),
      mut('payer', 'unchecked'),
      ro('authority', 'signer'),
      tokenProgram,
    ],
    handler(a) {
      // Made even at price 0, so a negative timeout panics here too.
      const job = a.job()
      const vault = a.key('vault')
      a.ctx.transferTokens(vault, a.key('user'), vault, deposit(job.price, job.timeout))
    },
  },

  extend: {
    accounts: [
      mut('job', 'job', {
        checks: (a) => {
          const job = a.job()
          require(job.market.equals(a.key('market')), JobsError.InvalidMarketAccount, 'job')
          require(job.project.equals(a.key('authority')), NosanaError.Unauthorized, 'job')
          require(job.price === 0n || job.payer.equals(a.key('payer')), NosanaError.Unauthorized, 'job')
          require(job.state === JobState.QUEUED, JobsError.JobInWrongState, 'job')
        },
      }),
      ro('market', 'market', {checks: hasVault}),
      mut('user', 'token', {
        checks: (a) =>
          require(a.job().price === 0n ||
            a.key('user').equals(ata(a.ctx, a.key('payer'))), NosanaError.InvalidATA, 'user'),
      }),
      mut('vault', 'token'),
      mut('rewardsReflection', 'reflection'),
      mut('rewardsVault', 'token'),
      ro('authority', 'signer'),
      ro('payer', 'signer'),
      rewardsProgram,
      tokenProgram,
    ],
    handler(a, args) {
      const job = a.job()
      if (args.timeout <= job.timeout) fail(JobsError.JobTimeoutNotGreater)
      const delta = i64(args.timeout - job.timeout, 'timeout delta')
      job.timeout = args.timeout
      if (job.price === 0n) return
      a.ctx.transferTokens(a.key('user'), a.key('vault'), a.key('payer'), u64(job.price * delta, 'extra deposit'))
    },
  },

  end: {
    accounts: [
      mut('job', 'job', {
        checks: (a) => {
          const job = a.job()
          require(job.market.equals(a.key('market')), JobsError.InvalidMarketAccount, 'job')
          require(job.project.equals(a.key('authority')), NosanaError.Unauthorized, 'job')
        },
      }),
      ro('market', 'market', {checks: hasVault}),
      mut('run', 'run', {
        close: 'payer',
        checks: (a) => {
          const run = a.run()
          require(run.payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'run')
          require(run.job.equals(a.key('job')), JobsError.InvalidJobAccount, 'run')
        },
      }),
      mut('deposit', 'token', {
        dup: true,
        checks: (a) =>
          require(a.job().price === 0n ||
            a.key('deposit').equals(ata(a.ctx, a.job().payer)), NosanaError.InvalidATA, 'deposit'),
      }),
      mut('user', 'token', {
        checks: (a) =>
          require(a.job().price === 0n ||
            a.key('user').equals(ata(a.ctx, a.run().node)), NosanaError.InvalidATA, 'user'),
      }),
      mut('vault', 'token'),
      mut('payer', 'unchecked'),
      mut('authority', 'signer'),
      tokenProgram,
    ],
    handler(a) {
      const job = a.job()
      const run = a.run()
      Object.assign(job, {state: JobState.DONE, timeStart: run.time, timeEnd: a.ctx.now, node: run.node})
      settle(a)
    },
  },

  work: {
    accounts: [
      mut('run', 'unchecked', {checks: freshRun}),
      mut('market', 'market', {
        checks: (a) => {
          const market = a.market()
          const node = a.key('authority')
          if (market.queueType !== QueueType.JOB)
            require(!market.queue.some((k) => k.equals(node)), JobsError.NodeAlreadyQueued, 'market')
        },
      }),
      mut('payer', 'signer'),
      ...nodeGateAccounts,
      ro('metadata', 'unchecked', {checks: metadataChecks}),
      ro('authority', 'signer'),
      systemProgram,
    ],
    handler(a) {
      const market = a.market()
      const node = a.key('authority')
      if (market.queueType === QueueType.JOB) createRun(a, popFirst(market), node)
      else addToQueue(market, node, QueueType.NODE)
    },
  },

  stop: {
    accounts: [
      mut('market', 'market', {
        checks: (a) => {
          const market = a.market()
          const signer = a.key('authority')
          require(market.queueType === QueueType.NODE, JobsError.MarketInWrongState, 'market')
          require(market.authority.equals(signer) || a.key('node').equals(signer), NosanaError.Unauthorized, 'market')
        },
      }),
      ro('node', 'unchecked'),
      ro('authority', 'signer'),
    ],
    handler(a) {
      removeFromQueue(a.market(), a.key('node'))
    },
  },

  claim: {
    accounts: [
      mut('job', 'job', {
        checks: (a) => {
          const job = a.job()
          require(job.market.equals(a.key('market')), JobsError.InvalidMarketAccount, 'job')
          require(job.state === JobState.STOPPED, JobsError.JobInWrongState, 'job')
        },
      }),
      mut('run', 'run', {init: {payer: 'payer'}}),
      ro('market', 'market'),
      ...nodeGateAccounts,
      ro('metadata', 'unchecked', {checks: metadataChecks}),
      mut('payer', 'signer'),
      ro('authority', 'signer'),
      systemProgram,
    ],
    handler(a) {
      // The job stays Stopped: it may be claimed again, or recovered by its project.
      Object.assign(a.run(), {job: a.key('job'), node: a.key('authority'), payer: a.key('payer'), time: a.ctx.now})
    },
  },

  complete: {
    accounts: [
      mut('job', 'job', {
        checks: (a) => {
          const job = a.job()
          require(job.state === JobState.DONE, JobsError.JobInWrongState, 'job')
          require(job.node.equals(a.key('authority')), NosanaError.Unauthorized, 'job')
          require(isZero(job.ipfsResult), JobsError.JobResultsAlreadySet, 'job')
        },
      }),
      ro('authority', 'signer'),
    ],
    handler(a, args) {
      if (isZero(args.ipfsResult)) fail(JobsError.JobResultNull)
      a.job().ipfsResult = args.ipfsResult
    },
  },

  finish: {
    accounts: [
      mut('job', 'job', {
        checks: (a) => {
          const job = a.job()
          require(job.market.equals(a.key('market')), JobsError.InvalidMarketAccount, 'job')
          require(job.payer.equals(a.key('payerJob')), NosanaError.InvalidPayer, 'job')
        },
      }),
      mut('run', 'run', {
        close: 'payerRun',
        checks: (a) => {
          const run = a.run()
          require(run.job.equals(a.key('job')), JobsError.InvalidJobAccount, 'run')
          require(run.payer.equals(a.key('payerRun')), NosanaError.InvalidPayer, 'run')
          require(run.node.equals(a.key('authority')), NosanaError.Unauthorized, 'run')
        },
      }),
      ro('market', 'market', {checks: hasVault}),
      mut('vault', 'token'),
      mut('deposit', 'token', {
        dup: true,
        checks: (a) =>
          require(a.job().price === 0n ||
            a.key('deposit').equals(ata(a.ctx, a.key('payerJob'))), NosanaError.InvalidATA, 'deposit'),
      }),
      mut('user', 'token', {
        checks: (a) =>
          require(a.job().price === 0n ||
            a.token('user').mint.equals(a.ctx.ids.tokenMint), NosanaError.InvalidATA, 'user'),
      }),
      mut('payerRun', 'unchecked'),
      mut('payerJob', 'unchecked'),
      ro('authority', 'signer'),
      tokenProgram,
    ],
    handler(a, args) {
      if (isZero(args.ipfsResult)) fail(JobsError.JobResultNull)
      Object.assign(a.job(), {
        ipfsResult: args.ipfsResult,
        node: a.key('authority'),
        state: JobState.DONE,
        timeEnd: a.ctx.now,
        timeStart: a.run().time,
      })
      settle(a)
    },
  },

  quit: {
    accounts: [
      mut('job', 'job'),
      mut('run', 'run', {
        close: 'payer',
        checks: (a) => {
          const run = a.run()
          require(run.job.equals(a.key('job')), JobsError.InvalidJobAccount, 'run')
          require(run.payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'run')
          require(run.node.equals(a.key('authority')), NosanaError.Unauthorized, 'run')
        },
      }),
      mut('payer', 'unchecked'),
      ro('authority', 'signer'),
    ],
    handler(a) {
      // Whatever the state was, a Done job included; the job is not queued again.
      a.job().state = JobState.STOPPED
    },
  },

  quitAdmin: {
    accounts: [
      mut('run', 'run', {
        close: 'payer',
        checks: (a) => require(a.run().payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'run'),
      }),
      mut('payer', 'unchecked'),
      ro('authority', 'signer', {checks: adminOnly}),
    ],
    handler() {},
  },

  clean: {
    accounts: [
      mut('job', 'job', {
        close: 'payer',
        checks: (a) => {
          const job = a.job()
          require(job.payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'job')
          require(job.state === JobState.DONE, JobsError.JobInWrongState, 'job')
          // Any market will do: the program does not tie it to the job.
          require(a.market().jobExpiration < a.ctx.now - job.timeEnd, JobsError.JobNotExpired, 'job')
        },
      }),
      ro('market', 'market'),
      mut('payer', 'unchecked'),
    ],
    handler() {},
  },

  cleanAdmin: {
    accounts: [
      mut('job', 'job', {
        close: 'payer',
        checks: (a) => require(a.job().payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'job'),
      }),
      mut('payer', 'unchecked'),
      ro('authority', 'signer', {checks: adminOnly}),
    ],
    handler() {},
  },
}

function adminOnly(a: Loaded): void {
  require(a.key('authority').equals(a.ctx.ids.marketAdmin), NosanaError.Unauthorized, 'authority')
}

/** A zeroed account of a program type, as `init` leaves it before the handler fills it. */
export function zeroed(kind: 'job' | 'run' | 'market'): JobAccount | RunAccount | MarketAccount {
  const key = PublicKey.default
  if (kind === 'run') return {job: key, node: key, payer: key, state: 0, time: 0n}
  if (kind === 'job') {
    return {
      ipfsJob: ZERO,
      ipfsResult: ZERO,
      market: key,
      node: key,
      payer: key,
      price: 0n,
      project: key,
      state: 0,
      timeEnd: 0n,
      timeStart: 0n,
      timeout: 0n,
    }
  }
  return {
    authority: key,
    jobExpiration: 0n,
    jobPrice: 0n,
    jobTimeout: 0n,
    jobType: 0,
    vault: key,
    vaultBump: 0,
    nodeAccessKey: key,
    nodeXnosMinimum: 0n,
    queueType: 0,
    queue: [],
  }
}
