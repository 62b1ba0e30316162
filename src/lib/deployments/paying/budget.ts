/**
 * A deployment's spend and its budget (docs/deployments.md, "Autoscaling"): the deposits of the jobs listed for it
 * minus what came back, from what the manager recorded of each job (its timeout on chain, its start and end). The
 * program pays a node price x min(end - start, timeout) and gives the rest back (jobs-program-constraints.md, `end`
 * and `delist`), so a job over is counted at what its node was paid, one delisted before it started at nothing, and
 * one not over at its whole deposit (what it may still cost). A job whose end is not known (its account closed) is
 * counted whole too: the spend is never under what was paid, so a budget checked against it is never passed.
 *
 * Each job is counted at its own price (the `price` its account records, copied from the market when it was listed),
 * not at the market's price today: a market's price can change (`update`), and neither a deposit taken nor what a node
 * is paid from it moves with it.
 */
import {SIGNATURE_FEE} from '../../market/rpc/balances.js'
import {LIST_SIGNATURES} from './floor.js'
import {isOver} from '../strategies/plan.js'
import type {JobRow, TaskRow} from '../types.js'

/** What of a job its cost is read from. */
export type SpentJob = Pick<JobRow, 'state' | 'time_start' | 'time_end' | 'chain_timeout' | 'chain_price'>

/**
 * The job's own price a second. A row stored before the job's price was recorded has none: it falls back to
 * `marketPrice` (the market's price now), which is the job's own unless the market changed since it was listed.
 * Only rows over before the upgrade keep that gap: the manager's next read of a job not over records its price.
 */
export function jobPrice(job: Pick<SpentJob, 'chain_price'>, marketPrice: bigint): bigint {
  return job.chain_price === null || job.chain_price === undefined ? marketPrice : BigInt(job.chain_price)
}

/** Token base units a job took from the vault and did not give back, at its own price (`marketPrice` without one). */
export function jobSpend(job: SpentJob, marketPrice: bigint): bigint {
  const pricePerSecond = jobPrice(job, marketPrice)
  const deposit = pricePerSecond * BigInt(job.chain_timeout)
  if (!isOver(job.state)) return deposit
  if (job.time_start === 0) return 0n
  const end = job.time_end ?? 0
  if (end === 0) return deposit
  const ran = Math.min(Math.max(0, end - job.time_start), job.chain_timeout)
  return pricePerSecond * BigInt(ran)
}

/** The token base units the deployment's jobs spent (jobSpend summed), plus a deposit sent and not yet recorded. */
export function tokensSpent(jobs: readonly SpentJob[], marketPrice: bigint, inFlight = 0n): bigint {
  return jobs.reduce((sum, job) => sum + jobSpend(job, marketPrice), inFlight)
}

/**
 * The lamports of the signatures the deployment's transactions paid: three a listing, one an extension or a stop.
 * Rents are left out (they come back when the accounts close); so are priority fees, which the store does not keep.
 */
export function feesSpent(tasks: readonly Pick<TaskRow, 'task' | 'status' | 'tx'>[], listed: number): bigint {
  const single = tasks.filter((t) => t.task !== 'LIST' && t.status === 'DONE' && t.tx !== null).length
  return SIGNATURE_FEE * (LIST_SIGNATURES * BigInt(listed) + BigInt(single))
}

/** True when a payment of `cost` keeps the spend within the budget (always, without one). */
export function withinBudget(budget: number | null | undefined, spent: bigint, cost: bigint): boolean {
  return budget === null || budget === undefined || spent + cost <= BigInt(budget)
}

/**
 * The most replicas the budget keeps: the jobs alive now (their deposits are counted already) plus the listings of
 * `deposit` the rest of the budget still pays for; undefined without a budget.
 */
export function affordableReplicas(
  budget: number | null | undefined,
  spent: bigint,
  deposit: bigint,
  alive: number,
): number | undefined {
  // A market that charges nothing spends nothing: no cap.
  if (budget === null || budget === undefined || deposit <= 0n) return undefined
  const left = BigInt(budget) - spent
  if (left <= 0n) return alive
  return alive + Number(left / deposit)
}
