/** The chain's view of a deployment's jobs, read over RPC and written back to their rows. */
import {PublicKey} from '@solana/web3.js'

import {ExitCode, isGpunetError} from '../../errors.js'
import {type JobView, readJob} from '../../market/jobs/jobs.js'
import type {ManagerContext} from '../context.js'
import type {JobOnChain} from '../strategies/index.js'
import {isOver} from '../strategies/index.js'
import type {JobRow} from '../types.js'

/**
 * Reads every job of the deployment not known to be over, updates its row, and answers the view of all of them;
 * `rows` are its job rows when already read (the worker's tick reads them for all deployments at once).
 */
export async function refreshJobs(ctx: ManagerContext, deployment: string, rows?: JobRow[]): Promise<JobOnChain[]> {
  rows ??= await ctx.store.jobs(deployment)
  return Promise.all(
    rows.map(async (row) => {
      if (isOver(row.state)) return onChain(row)
      const view = await readRecordedJob(ctx, row)
      if (!view) {
        // Delisted: the program closes a job's account when its poster takes it off the queue.
        await ctx.store.updateJob(row.job, {state: 'STOPPED'}, ctx.now())
        ctx.draining?.forget(row.job)
        return {...onChain({...row, state: 'STOPPED'}), justEnded: true}
      }
      const change = {
        // The run the node made (not the one the `list` named when no node waited): read first from now on.
        run: view.run ? view.run.address.toBase58() : row.run,
        state: view.status,
        // A running job's start is its run's; a finished one keeps it in the job account.
        time_start: Number(view.run ? view.run.time : view.job.timeStart),
        chain_timeout: Number(view.job.timeout),
        chain_price: String(view.job.price),
        time_end: Number(view.job.timeEnd),
      }
      if (
        change.state !== row.state ||
        change.time_start !== row.time_start ||
        change.chain_timeout !== row.chain_timeout ||
        change.chain_price !== row.chain_price ||
        change.time_end !== (row.time_end ?? 0)
      ) {
        await ctx.store.updateJob(row.job, change, ctx.now())
      }
      // A job ended drains no more: its flag goes, so the flags stay as many as the jobs running.
      if (isOver(change.state)) ctx.draining?.forget(row.job)
      // Seen over for the first time in this pass: the strategies say once why it ended.
      return {...onChain({...row, ...change}), justEnded: isOver(change.state)}
    }),
  )
}

/** A recorded job as the chain shows it; null once its account is closed (a delisted job's is). */
export async function readRecordedJob(ctx: ManagerContext, row: JobRow): Promise<JobView | null> {
  try {
    return await readJob(ctx.net.connection, ctx.net.programId, new PublicKey(row.job), new PublicKey(row.run))
  } catch (error) {
    if (isGpunetError(error) && error.exitCode === ExitCode.NOT_FOUND) return null
    throw error
  }
}

function onChain(row: JobRow): JobOnChain {
  return {
    job: row.job,
    state: row.state,
    timeStart: row.time_start,
    timeout: row.chain_timeout,
    price: row.chain_price ?? null,
    timeEnd: row.time_end ?? 0,
    created_at: row.created_at,
    stop_requested: row.stop_requested,
  }
}
