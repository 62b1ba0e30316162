/**
 * Paying safely: each transaction is signed once and saved (with its blockhash's last valid height) before it is
 * sent. A task found PROCESSING after a restart asks the chain first: the LIST's job account exists, or the job's
 * timeout moved past the one recorded before the EXTEND, and it is recorded as done; else, while the blockhash is
 * valid, the same bytes are sent again (they can land once at most); once it has expired they never can, and the
 * task starts over. So a crash never lists or extends twice.
 */
import {PublicKey} from '@solana/web3.js'

import {isGpunetError} from '../../errors.js'
import {isFinal, type JobView} from '../../market/jobs/jobs.js'
import {quoteExtend, stopJob} from '../../market/jobs/manage.js'
import {quotePost} from '../../market/jobs/post.js'
import {rpcCall} from '../../market/rpc/rpc.js'
import {resendSaved, sendSigned, signOnce} from '../../market/rpc/send.js'
import {walletFromBytes, type Wallet} from '../../keys/wallet.js'
import {payWithinBudget} from './budget-gate.js'
import {readRecordedJob} from './chain-view.js'
import type {ManagerContext} from '../context.js'
import {crashPoint} from '../crash-points.js'
import {drainJob} from '../draining.js'
import {holderOf} from '../store/manager-lease.js'
import {jobTimeoutSeconds} from '../strategies/index.js'
import type {DeploymentRow, InFlight, TaskRow} from '../types.js'

/** The vault's signer. */
export async function vaultWallet(ctx: ManagerContext, vault: string): Promise<Wallet> {
  const row = await ctx.store.vault(vault)
  if (!row) throw new Error(`no vault ${vault} in the store`)
  return walletFromBytes(ctx.seal.open(vault, row.sealed).secretKey)
}

/**
 * Sends saved bytes the first time: true once they landed. When they expired unlanded, or the program refused them
 * (in the preflight, or landed failed), they can never land: forgotten, so the next run builds new ones. When the
 * RPC failed they may have gone out: kept, for the next run to ask the chain.
 */
async function sendSaved(ctx: ManagerContext, task: TaskRow, saved: InFlight): Promise<boolean> {
  let landed: string | null
  try {
    landed = await sendSigned(ctx.net.connection, Buffer.from(saved.raw, 'base64'), saved.lastValidBlockHeight)
  } catch (error) {
    if (isGpunetError(error) && REFUSED.has(error.code)) await ctx.store.saveInFlight(task.id, null, ctx.now())
    throw error
  }
  if (landed === null) await ctx.store.saveInFlight(task.id, null, ctx.now())
  return landed !== null
}

/**
 * The one order of paying: the signed transaction saved, then sent (true once it landed), each step followed by its
 * named crash point, so a kill between them leaves a task the next run settles from the chain, never pays twice.
 */
async function payOnce(ctx: ManagerContext, task: TaskRow, saved: InFlight, kind: 'list' | 'extend'): Promise<boolean> {
  // A manager whose lease ran out (stalled past it) must not pay: another may be working on the deployment.
  await ctx.holdLease?.(task.deployment)
  await ctx.store.saveInFlight(task.id, saved, ctx.now())
  crashPoint(`${kind}-saved`, ctx.env)
  if (!(await sendSaved(ctx, task, saved))) return false
  crashPoint(`${kind}-sent`, ctx.env)
  return true
}

/** The failures of a send that say the program refused the transaction: it has not landed and never will. */
const REFUSED = new Set(['transaction_failed', 'insufficient_balance'])

/** Lists one job of a LIST task (or settles the one in flight). */
export async function runList(ctx: ManagerContext, deployment: DeploymentRow, task: TaskRow): Promise<void> {
  const {connection} = ctx.net
  if (task.in_flight) {
    const saved = task.in_flight
    const exists = async () =>
      (await rpcCall(connection, () => connection.getAccountInfo(new PublicKey(saved.job!)))) !== null
    if ((await exists()) || (await resendSaved(ctx.net.connection, saved)) || (await exists()))
      return recordList(ctx, deployment, task, saved, null)
    // Expired and not on chain: it never will be. The next run builds a new one.
    await ctx.store.saveInFlight(task.id, null, ctx.now())
    return
  }
  const revision = await ctx.store.revision(deployment.id, task.revision)
  if (!revision) throw new Error(`deployment ${deployment.id} has no revision ${task.revision}`)
  const wallet = await vaultWallet(ctx, deployment.vault)
  const quote = await quotePost(
    ctx.net,
    wallet,
    new PublicKey(deployment.market),
    revision.ipfs_definition_hash,
    BigInt(jobTimeoutSeconds(deployment)),
  )
  if (!(await payWithinBudget(ctx, deployment, task, quote.total, quote.pricePerSecond))) return
  const [, job, run] = quote.transaction.signers
  const saved: InFlight = {
    ...signOnce(quote.transaction),
    job: job!.publicKey.toBase58(),
    run: run!.publicKey.toBase58(),
    jobKey: ctx.seal.seal(job!).toString('base64'),
  }
  if (await payOnce(ctx, task, saved, 'list')) await recordList(ctx, deployment, task, saved, quote.pricePerSecond)
}

/**
 * Records a listing sent. `price` is the market's price the quote read, which the program copies into the job; when
 * the listing is settled from a saved transaction it is unknown here (null), and the next read of the job (chain-view.ts)
 * records the job's own.
 */
async function recordList(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  task: TaskRow,
  saved: InFlight,
  price: bigint | null,
) {
  const now = ctx.now()
  await ctx.store.recordListed(
    task,
    {
      job: saved.job!,
      deployment: deployment.id,
      tx: saved.signature,
      market: deployment.market,
      revision: task.revision,
      run: saved.run!,
      state: 'QUEUED',
      time_start: 0,
      chain_timeout: jobTimeoutSeconds(deployment),
      chain_price: price === null ? null : String(price),
      stop_requested: false,
      created_at: now,
      updated_at: now,
    },
    saved.signature,
    now,
    // Under leases, checked in the same commit: a manager whose lease ran out meanwhile leaves the job to the one
    // that took the deployment over (a lease_lost, not a failed attempt).
    ctx.holdLease ? holderOf(ctx) : undefined,
  )
  await ctx.store.addEvent(
    {
      deployment: deployment.id,
      category: 'Event',
      type: 'JOB_LIST_CONFIRMED',
      message: `job ${saved.job} listed`,
      tx: saved.signature,
    },
    now,
  )
}

/** Extends a job by the deployment's timeout (or settles the extension in flight). */
export async function runExtend(ctx: ManagerContext, deployment: DeploymentRow, task: TaskRow): Promise<void> {
  const row = await ctx.store.job(task.job!)
  if (!row) throw new Error(`no job ${task.job} in the store`)
  const read = () => readRecordedJob(ctx, row)
  const view = await read()
  if (task.in_flight) {
    const saved = task.in_flight
    const moved = (seen: JobView | null) => seen !== null && seen.job.timeout > BigInt(saved.timeoutBefore!)
    if (moved(view) || (await resendSaved(ctx.net.connection, saved)) || moved(await read())) {
      return recordExtend(ctx, deployment, task, saved)
    }
    await ctx.store.saveInFlight(task.id, null, ctx.now())
    return
  }
  if (!view || isFinal(view.status)) {
    const state = view ? view.status : 'delisted'
    await ctx.store.updateTask(task.id, {status: 'DONE', error: `job ${row.job} is already ${state}`}, ctx.now())
    return
  }
  const wallet = await vaultWallet(ctx, deployment.vault)
  // A one-shot extension (the extend rule) adds its own seconds; the others one of the deployment's timeout.
  const timeoutAfter = view.job.timeout + BigInt(task.limit ?? jobTimeoutSeconds(deployment))
  const quote = await quoteExtend(ctx.net, wallet, view, timeoutAfter)
  if (!(await payWithinBudget(ctx, deployment, task, quote.cost, view.job.price))) return
  const saved: InFlight = {
    ...signOnce(quote.transaction),
    timeoutBefore: Number(view.job.timeout),
    timeoutAfter: Number(timeoutAfter),
  }
  if (await payOnce(ctx, task, saved, 'extend')) await recordExtend(ctx, deployment, task, saved)
}

async function recordExtend(ctx: ManagerContext, deployment: DeploymentRow, task: TaskRow, saved: InFlight) {
  const now = ctx.now()
  await ctx.store.updateJob(task.job!, {chain_timeout: saved.timeoutAfter!}, now)
  await ctx.store.saveInFlight(task.id, null, now)
  await ctx.store.updateTask(task.id, {status: 'DONE', tx: saved.signature, error: null}, now)
  await ctx.store.addEvent(
    {
      deployment: deployment.id,
      category: 'Event',
      type: 'JOB_EXTEND_SUCCESSFUL',
      message: `job ${task.job} extended from ${saved.timeoutBefore} s to ${saved.timeoutAfter} s`,
      tx: saved.signature,
    },
    now,
  )
}

/** Stops a job: delists a queued one, ends a running one. Sending it twice is harmless (the second is refused). */
export async function runStop(ctx: ManagerContext, deployment: DeploymentRow, task: TaskRow): Promise<void> {
  const row = await ctx.store.job(task.job!)
  if (!row) throw new Error(`no job ${task.job} in the store`)
  const view = await readRecordedJob(ctx, row)
  let tx: string | null = null
  if (view && !isFinal(view.status)) {
    // A running replica is taken off the stable URL and its requests finish before its job ends.
    if (view.status === 'RUNNING') await drainJob(ctx, row.job, deployment.time_scale)
    tx = (await stopJob(ctx.net, await vaultWallet(ctx, deployment.vault), view)).signature
  }
  const now = ctx.now()
  await ctx.store.updateTask(task.id, {status: 'DONE', tx, error: null}, now)
  await ctx.store.addEvent(
    {
      deployment: deployment.id,
      category: 'Event',
      type: 'JOB_STOPPED_CONFIRMED',
      message: tx ? `job ${row.job} stopped` : `job ${row.job} had already ended (${view?.status ?? 'delisted'})`,
      tx,
    },
    now,
  )
}
