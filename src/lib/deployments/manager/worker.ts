/**
 * The worker: every poll (5 s, divided by the largest time_scale of the deployments it runs) it reads the chain's
 * view of each active deployment's jobs, asks the deployment's strategy for the tasks due, and runs the tasks whose
 * time has come, one at a time, settling those a stopped process left in flight first.
 */
import {isGpunetError} from '../../errors.js'
import {autoscale} from './autoscaler.js'
import {refreshJobs} from '../paying/chain-view.js'
import type {ManagerContext} from '../context.js'
import {cooldownMs, DEFAULT_COOLDOWNS} from '../cooldowns.js'
import {claim, holderOf, leaseMs, MANAGER_LEASE_PREFIX} from '../store/manager-lease.js'
import {probedForGateway, watchJobs} from './job-watch.js'
import {isGraceStop} from './tunnel-watch.js'
import {runExtend, runList, runStop} from '../paying/paying.js'
import {stepMove} from './move.js'
import {stepRollout} from './rollout.js'
import {POLL_MS, scaledMs, STRATEGY_PLANS} from '../strategies/index.js'
import type {Workload} from '../store/store.js'
import {ACTIVE_STATUSES, type DeploymentRow, type TaskKind, type TaskRow} from '../types.js'

export {POLL_MS}
/** The shortest poll, however large a time_scale. */
const MIN_POLL_MS = 200
/** Failed attempts before a task is given up and its deployment goes to ERROR. */
export const MAX_ATTEMPTS = 5

export interface Worker {
  /** Stops polling, once the pass under way is over. */
  stop(): Promise<void>
}

/** How a worker polls: its poll before the deployments' time_scale (POLL_MS), and how it runs a due task. */
export interface WorkerOptions {
  /** ms; a test sets it long so that only a wake explains a pass. */
  pollMs?: number
  /** runTask unless told (a test's stand-in chain). */
  run?: TaskRunner
}

/**
 * Starts polling (at `options.pollMs`, POLL_MS unless told); `stop` waits for the pass under way. A request held by a gateway (load.ts' onHeld) starts the
 * next pass at once rather than at the next poll (after the pass under way, when one is), so a deployment at 0
 * replicas lists one without waiting for it.
 */
export function startWorker(ctx: ManagerContext, options: WorkerOptions = {}): Worker {
  const pollMs = options.pollMs ?? POLL_MS
  const run = options.run ?? runTask
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  // True while the next pass waits on its timer; otherwise a pass is under way (or about to be scheduled).
  let waiting = false
  let wakeAfter = false
  let scale = 1
  const pass = async () => {
    try {
      scale = await tick(ctx, run)
    } catch (error) {
      ctx.log(`deployment worker: ${(error as Error).message}`)
    }
  }
  const next = () => {
    waiting = false
    running = pass().then(schedule)
  }
  const schedule = () => {
    if (stopped) return
    if (wakeAfter) {
      wakeAfter = false
      return next()
    }
    waiting = true
    timer = setTimeout(next, Math.max(MIN_POLL_MS, pollMs / scale))
  }
  const unsubscribe = ctx.load?.onHeld(() => {
    if (stopped) return
    if (!waiting) {
      wakeAfter = true
      return
    }
    clearTimeout(timer)
    next()
  })
  next()
  return {
    async stop() {
      stopped = true
      unsubscribe?.()
      clearTimeout(timer)
      await running
      await releaseAll(ctx).catch(() => {})
    },
  }
}

/**
 * One pass; answers the largest time_scale among the active deployments (the next poll is divided by it). Each
 * deployment with work (active, or with a task due) is worked on only under its lease (manager-lease.ts): a
 * manager keeps the deployments it holds from pass to pass, takes free ones up to its share among the managers holding leases, and gives up those
 * beyond its share, so managers sharing a database split the deployments and never run one's tasks twice.
 */
export async function tick(ctx: ManagerContext, run: TaskRunner = runTask): Promise<number> {
  const active = await ctx.store.deploymentsIn(ACTIVE_STATUSES)
  const due = await ctx.store.dueTasks(ctx.now())
  const ids = [...new Set([...active.map((d) => d.id), ...due.map((t) => t.deployment)])]
  const me = holderOf(ctx)
  // This manager's own lease says it is alive, so the others count it in their share (and make room for it).
  const scale = Math.max(1, ...active.map((d) => d.time_scale))
  await ctx.store.claimDeployment(`${MANAGER_LEASE_PREFIX}${me}`, me, leaseMs(scale), ctx.now())
  const leases = await ctx.store.leases(ctx.now())
  const holders = new Map(leases.map((l) => [l.deployment, l.holder]))
  const share = Math.ceil(ids.length / new Set([...leases.map((l) => l.holder), me]).size)
  const mine = ids.filter((id) => holders.get(id) === me)
  for (const id of mine.slice(share)) await ctx.store.releaseDeployment(id, me)
  let held = Math.min(mine.length, share)
  const chosen: string[] = []
  for (const id of ids) {
    const holder = holders.get(id)
    if (holder === me ? mine.indexOf(id) >= share : holder !== undefined || held >= share) continue
    if (holder !== me) held += 1
    chosen.push(id)
  }
  // Leases first, then what the deployments held need in a few set-based reads (read under the leases: the manager
  // that held one before may have changed it), rather than several round trips per deployment.
  const scales = new Map(active.map((d) => [d.id, d.time_scale]))
  const unknown = chosen.filter((id) => !scales.has(id))
  if (unknown.length > 0)
    for (const [id, w] of await ctx.store.workloads(unknown)) scales.set(id, w.deployment.time_scale)
  const claimed: string[] = []
  for (const id of chosen) {
    if (!scales.has(id)) continue
    try {
      if (await claim(ctx, id, scales.get(id)!)) claimed.push(id)
    } catch (error) {
      ctx.log(`deployment ${id}: ${(error as Error).message}`)
    }
  }
  const workloads = claimed.length > 0 ? await ctx.store.workloads(claimed) : new Map<string, Workload>()
  for (const id of claimed) {
    const workload = workloads.get(id)
    if (!workload) continue
    try {
      await workOn(ctx, id, run, workload)
    } catch (error) {
      ctx.log(`deployment ${id}: ${(error as Error).message}`)
    }
  }
  return Math.max(1, ...(await ctx.store.deploymentsIn(ACTIVE_STATUSES)).map((d) => d.time_scale))
}

/** Gives up every lease this manager holds, so that the others take its deployments over at once (a clean stop). */
export async function releaseAll(ctx: ManagerContext): Promise<void> {
  const me = holderOf(ctx)
  for (const lease of await ctx.store.leases(ctx.now()))
    if (lease.holder === me) await ctx.store.releaseDeployment(lease.deployment, me)
}

/** How a due task is run: runTask, or a stand-in without a chain (bench/deployment-managers.bench.ts). */
export type TaskRunner = (ctx: ManagerContext, deployment: DeploymentRow, task: TaskRow) => Promise<void>

/**
 * Plans one deployment and runs its due tasks, under its lease (taken or renewed here, and kept); another
 * manager's lease leaves it alone. `read` is what the tick read of it after taking its lease.
 */
export async function workOn(
  ctx: ManagerContext,
  id: string,
  run: TaskRunner = runTask,
  read?: Workload,
): Promise<void> {
  if (!read) {
    const found = await ctx.store.deployment(id)
    if (!found || !(await claim(ctx, id, found.time_scale))) return
    // Read again under the lease: the manager that held it before may have changed it.
    read = (await ctx.store.workloads([id])).get(id)
    if (!read) return
  } else if (!(await claim(ctx, id, read.deployment.time_scale))) {
    // Renewed before planning: the deployments before this one may have taken longer than a short lease.
    return
  }
  const {deployment} = read
  let openTasks = read.openTasks
  if (ACTIVE_STATUSES.includes(deployment.status)) {
    try {
      openTasks = await planDeployment(ctx, read)
    } catch (error) {
      ctx.log(`deployment ${deployment.id}: planning failed: ${(error as Error).message}`)
      openTasks = await ctx.store.tasks(id, {open: true})
    }
  }
  const now = ctx.now()
  const tasks = openTasks
    .filter((task) => task.due_at <= now)
    .sort(
      (a, b) =>
        Number(b.status === 'PROCESSING') - Number(a.status === 'PROCESSING') || a.due_at - b.due_at || a.id - b.id,
    )
  for (const task of tasks) {
    const current = await ctx.store.deployment(id)
    if (!current || !(await claim(ctx, id, current.time_scale))) return
    await run(ctx, current, task)
  }
}

/** Plans a deployment; answers its open tasks afterwards. */
async function planDeployment(ctx: ManagerContext, read: Workload): Promise<TaskRow[]> {
  const refreshed = await refreshJobs(ctx, read.deployment.id, read.jobs)
  // The traffic moves the replica count first (autoscaler.ts), so the strategy plans for the new one.
  const row = (await autoscale(ctx, read.deployment, refreshed)).deployment
  // A rollout under way asks the strategy for one replica more, of the active revision (rollout.ts); a move under
  // way as many more as it moves, on the new market (move.ts). One refuses to begin while the other is under way.
  const rolled = await stepRollout(ctx, row, refreshed)
  const {deployment, jobs} = await stepMove(ctx, rolled)
  // A rollout or move step may add or cancel tasks: read them again when one may be under way (a job of another
  // revision, a move begun or ended).
  const openTasks =
    read.jobs.some((job) => job.revision !== row.active_revision) || row.move_from || deployment.move_from
      ? await ctx.store.tasks(deployment.id, {open: true})
      : read.openTasks
  // INFINITE plans with its services' health (readiness for rotation); any strategy behind a gateway that only
  // the manager's own probe tells which replicas serve (`deployment serve`) is watched for that probe alone.
  const watched = deployment.strategy === 'INFINITE' || probedForGateway(ctx)
  const watch = watched ? await watchJobs(ctx, deployment, jobs) : undefined
  const health = deployment.strategy === 'INFINITE' ? watch : undefined
  const now = ctx.now()
  const cooldowns = ctx.cooldowns
  const plan = STRATEGY_PLANS[deployment.strategy]({deployment, jobs, openTasks, now, health, cooldowns})
  for (const id of plan.cancel)
    await ctx.store.updateTask(id, {status: 'DONE', error: 'cancelled: no longer needed'}, now)
  for (const job of plan.stopping) await ctx.store.updateJob(job, {stop_requested: true}, now)
  // A job the plan stops now whose tunnel's grace stop is still ahead (tunnel-watch.ts' graceTask: never tried; a
  // retried STOP keeps its cooldown) is stopped now.
  for (const task of openTasks)
    if (isGraceStop(task, now) && plan.stopping.includes(task.job!))
      await ctx.store.updateTask(task.id, {due_at: now}, now)
  for (const event of plan.events ?? []) await ctx.store.addEvent({deployment: deployment.id, ...event, tx: null}, now)
  if (plan.throttleRounds !== undefined)
    await ctx.store.updateDeployment(deployment.id, {throttle_rounds: plan.throttleRounds}, now)
  const open = openTasks.filter((task) => !plan.cancel.includes(task.id))
  for (const due of plan.tasks) {
    open.push(
      await ctx.store.addTask(
        {
          deployment: deployment.id,
          task: due.task,
          job: due.task === 'LIST' ? null : due.job,
          limit: due.task === 'LIST' ? due.limit : (due.seconds ?? null),
          revision: deployment.active_revision,
          due_at: due.due_at,
        },
        now,
      ),
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
  return open
}

const RUNNERS: Record<TaskKind, TaskRunner> = {LIST: runList, EXTEND: runExtend, STOP: runStop}

/** runTask over other runners of each kind (a test's stand-ins for the chain): failures handled as runTask's. */
export function taskRunner(runners: Record<TaskKind, TaskRunner>): TaskRunner {
  return (ctx, deployment, task) => runTask(ctx, deployment, task, runners)
}

/**
 * Runs a task; a failure is counted and retried after its cooldown (cooldowns.ts), a lack of funds puts the
 * deployment in INSUFFICIENT_FUNDS.
 */
async function runTask(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  task: TaskRow,
  runners: Record<TaskKind, TaskRunner> = RUNNERS,
): Promise<void> {
  try {
    await runners[task.task](ctx, deployment, task)
    if (deployment.status === 'INSUFFICIENT_FUNDS') {
      await ctx.store.updateDeployment(deployment.id, {status: 'RUNNING'}, ctx.now())
    }
  } catch (error) {
    // Another manager took the deployment over: the task is its now, untouched here.
    if (isGpunetError(error) && error.code === 'lease_lost')
      return ctx.log(`deployment ${deployment.id}: ${error.message}`)
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
    // The n-th retry waits the n-th step of its ladder: a vault short of funds the slower one (it may be topped up).
    const cooldowns = ctx.cooldowns ?? DEFAULT_COOLDOWNS
    const wait = cooldownMs(attempts - 1, poor ? cooldowns.insufficientFunds : cooldowns.retry)
    await ctx.store.updateTask(
      task.id,
      {
        attempts,
        error: message,
        status: givenUp ? 'FAILED' : task.status,
        due_at: now + scaledMs(deployment, wait),
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
