/**
 * The budget's check before a payment (paying.ts' runList and runExtend): a listing or an extension whose deposit
 * would take the deployment's spend past its budget is not sent. A refused listing keeps the replicas alive now (the
 * count lowered to them, so nothing asks again); with none alive, or a refused extension (its job could not go on),
 * the deployment is stopped: event BUDGET_REACHED either way, with the figures.
 */
import type {ManagerContext} from '../context.js'
import {isOver, jobTimeoutSeconds} from '../strategies/index.js'
import type {DeploymentRow, JobRow, TaskRow} from '../types.js'
import {jobPrice, tokensSpent, withinBudget} from './budget.js'

/**
 * The deposits of payments saved and sent but not recorded yet (a task in flight other than `task`): a listing's at
 * `price`, an extension's at its job's own price (jobPrice, `price` for a row without one).
 */
function inFlightDeposits(
  tasks: readonly TaskRow[],
  task: TaskRow,
  deployment: DeploymentRow,
  jobs: readonly JobRow[],
  price: bigint,
): bigint {
  let sum = 0n
  for (const t of tasks) {
    if (t.id === task.id || !t.in_flight) continue
    const {timeoutBefore, timeoutAfter} = t.in_flight
    if (t.task === 'LIST') {
      sum += price * BigInt(jobTimeoutSeconds(deployment))
      continue
    }
    const job = jobs.find((j) => j.job === t.job)
    sum += jobPrice(job ?? {}, price) * BigInt(Math.max(0, (timeoutAfter ?? 0) - (timeoutBefore ?? 0)))
  }
  return sum
}

/**
 * True when paying `cost` (token base units, at `price` a second: the market's for a listing, the job's own for an
 * extension) keeps the deployment within its budget; else acts as the module says and answers false (the task is
 * done, nothing sent). The jobs recorded count at their own prices (budget.ts); `price` stands in for a row without.
 */
export async function payWithinBudget(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  task: TaskRow,
  cost: bigint,
  price: bigint,
): Promise<boolean> {
  if (deployment.budget === null || deployment.budget === undefined) return true
  const [jobs, open] = await Promise.all([ctx.store.jobs(deployment.id), ctx.store.tasks(deployment.id, {open: true})])
  const spent = tokensSpent(jobs, price, inFlightDeposits(open, task, deployment, jobs, price))
  if (withinBudget(deployment.budget, spent, cost)) return true
  const now = ctx.now()
  const alive = jobs.filter((j) => !isOver(j.state) && !j.stop_requested).length
  const what = task.task === 'LIST' ? 'a listing' : `an extension of job ${task.job}`
  const figures = `spent ${spent} of the budget's ${deployment.budget} token base units; ${what} would pay ${cost} more`
  await ctx.store.updateTask(task.id, {status: 'DONE', error: `budget reached: ${figures}`}, now)
  const stop = task.task !== 'LIST' || alive === 0
  const outcome = stop ? 'the deployment stops' : `${alive} replica${alive === 1 ? '' : 's'} kept, none added`
  await ctx.store.addEvent(
    {
      deployment: deployment.id,
      category: 'Deployment',
      type: 'BUDGET_REACHED',
      message: `${figures}: ${outcome}`,
      tx: null,
    },
    now,
  )
  if (stop) {
    await ctx.store.moveDeployment(
      deployment.id,
      ['STARTING', 'RUNNING', 'INSUFFICIENT_FUNDS'],
      {status: 'STOPPING'},
      now,
    )
  } else {
    await ctx.store.updateDeployment(deployment.id, {replicas: alive}, now)
  }
  return false
}
