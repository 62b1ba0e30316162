/**
 * The worker: every poll (5 s, divided by the largest time_scale of the deployments it runs) it reads the chain's
 * view of each active deployment's jobs, asks the deployment's strategy for the tasks due, and runs the tasks whose
 * time has come, one at a time, settling those a stopped process left in flight first.
 */
import {isGpunetError} from '../errors.js'
import {refreshJobs} from './chain-view.js'
import type {ManagerContext} from './context.js'
import {watchHealth} from './health-watch.js'
import {runExtend, runList, runStop} from './paying.js'
import {stepRollout} from './rollout.js'
import {STRATEGY_PLANS} from './strategies/index.js'
import {ACTIVE_STATUSES, type DeploymentRow, type TaskRow} from './types.js'

/** The network's manager polls every 5 s. */
export const POLL_MS = 5000
/** The shortest poll, however large a time_scale. */
const MIN_POLL_MS = 200
/** Failed attempts before a task is given up and its deployment goes to ERROR. */
export const MAX_ATTEMPTS = 5
/** The wait before a failed task is tried again (unscaled). */
const RETRY_MS = 15_000

export interface Worker {
  /** Stops polling, once the pass under way is over. */
  stop(): Promise<void>
}

/** Starts polling; `stop` waits for the pass under way. */
export function startWorker(ctx: ManagerContext): Worker {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let scale = 1
  const pass = async () => {
    try {
      scale = await tick(ctx)
    } catch (error) {
      ctx.log(`deployment worker: ${(error as Error).message}`)
    }
  }
  const schedule = () => {
    if (stopped) return
    timer = setTimeout(
      () => {
        running = pass().then(schedule)
      },
      Math.max(MIN_POLL_MS, POLL_MS / scale),
    )
  }
  running = pass().then(schedule)
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}

/** One pass; answers the largest time_scale among the active deployments (the next poll is divided by it). */
async function tick(ctx: ManagerContext): Promise<number> {
  const active = await ctx.store.deploymentsIn(ACTIVE_STATUSES)
  for (const deployment of active) {
    try {
      await planDeployment(ctx, deployment)
    } catch (error) {
      ctx.log(`deployment ${deployment.id}: planning failed: ${(error as Error).message}`)
    }
  }
  for (const task of await ctx.store.dueTasks(ctx.now())) {
    const deployment = await ctx.store.deployment(task.deployment)
    if (deployment) await runTask(ctx, deployment, task)
  }
  return Math.max(1, ...(await ctx.store.deploymentsIn(ACTIVE_STATUSES)).map((d) => d.time_scale))
}

async function planDeployment(ctx: ManagerContext, row: DeploymentRow): Promise<void> {
  // A rollout under way asks the strategy for one replica more, of the active revision (rollout.ts).
  const {deployment, jobs} = await stepRollout(ctx, row, await refreshJobs(ctx, row.id))
  const openTasks = await ctx.store.tasks(deployment.id, {open: true})
  // Only INFINITE watches its services (readiness for rotation, self-healing).
  const health = deployment.strategy === 'INFINITE' ? await watchHealth(ctx, deployment, jobs) : undefined
  const now = ctx.now()
  const plan = STRATEGY_PLANS[deployment.strategy]({deployment, jobs, openTasks, now, health})
  for (const id of plan.cancel)
    await ctx.store.updateTask(id, {status: 'DONE', error: 'cancelled: no longer needed'}, now)
  for (const job of plan.stopping) await ctx.store.updateJob(job, {stop_requested: true}, now)
  for (const event of plan.events ?? []) await ctx.store.addEvent({deployment: deployment.id, ...event, tx: null}, now)
  if (plan.throttleRounds !== undefined)
    await ctx.store.updateDeployment(deployment.id, {throttle_rounds: plan.throttleRounds}, now)
  for (const due of plan.tasks) {
    await ctx.store.addTask(
      {
        deployment: deployment.id,
        task: due.task,
        job: due.task === 'LIST' ? null : due.job,
        limit: due.task === 'LIST' ? due.limit : null,
        revision: deployment.active_revision,
        due_at: due.due_at,
      },
      now,
    )
  }
  if (plan.status && plan.status !== deployment.status) {
    await ctx.store.updateDeployment(deployment.id, {status: plan.status}, now)
    await ctx.store.addEvent(
      {
        deployment: deployment.id,
        category: 'Deployment',
        type: `DEPLOYMENT_${plan.status}`,
        message: `deployment ${plan.status.toLowerCase().replace('_', ' ')}`,
        tx: null,
      },
      now,
    )
  }
}

const RUNNERS = {LIST: runList, EXTEND: runExtend, STOP: runStop}

/** Runs a task; a failure is counted and retried later, a lack of funds puts the deployment in INSUFFICIENT_FUNDS. */
async function runTask(ctx: ManagerContext, deployment: DeploymentRow, task: TaskRow): Promise<void> {
  try {
    await RUNNERS[task.task](ctx, deployment, task)
    if (deployment.status === 'INSUFFICIENT_FUNDS') {
      await ctx.store.updateDeployment(deployment.id, {status: 'RUNNING'}, ctx.now())
    }
  } catch (error) {
    const now = ctx.now()
    const poor = isGpunetError(error) && error.code === 'insufficient_balance'
    const attempts = task.attempts + 1
    const message = (error as Error).message
    ctx.log(`deployment ${deployment.id}: ${task.task} failed: ${message}`)
    await ctx.store.addEvent(
      {deployment: deployment.id, category: 'Event', type: `JOB_${task.task}_ERROR`, message, tx: null},
      now,
    )
    const givenUp = !poor && attempts >= MAX_ATTEMPTS
    await ctx.store.updateTask(
      task.id,
      {
        attempts,
        error: message,
        status: givenUp ? 'FAILED' : task.status,
        due_at: now + Math.round(RETRY_MS / deployment.time_scale),
      },
      now,
    )
    if (poor && deployment.status !== 'STOPPING') {
      await ctx.store.updateDeployment(deployment.id, {status: 'INSUFFICIENT_FUNDS'}, now)
    } else if (givenUp && deployment.status !== 'STOPPING') {
      await ctx.store.updateDeployment(deployment.id, {status: 'ERROR'}, now)
    }
  }
}
