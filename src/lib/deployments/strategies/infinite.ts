/**
 * INFINITE, as the network's manager runs it: the replicas are kept running for ever. A replacement is listed
 * `rotation_time` before a job's end, and the old job is stopped once its replacement is ready (so the service has
 * no gap and the old job is paid only for the time it ran). A job that ends on its own, or misses its opt-in
 * startup_timeout, is replaced, with an event naming why; one whose tunnel stays lost is stopped by the tunnel watch
 * (manager/tunnel-watch.ts) and replaced as any job the manager stopped. Rapid completions throttle the listings
 * (rapidCompletions below: only jobs that COMPLETED count, never one the manager stopped): the next listing waits the
 * rapid-completion cooldown (cooldowns.ts: 60 s doubling, at most 1 h), and the round that reaches the max streak
 * (8) stops the deployment instead (the fail-safe). A scale-down stops queued jobs first, then the oldest running
 * (scale-down.ts); at 0 replicas it stays RUNNING with no job. A raised timeout extends the running jobs
 * (extend-rule.ts). Every duration is divided by the deployment's time_scale.
 */
import {cooldownMs, type Cooldowns, DEFAULT_COOLDOWNS} from '../cooldowns.js'
import type {DeploymentRow} from '../types.js'
import {INFINITE, rotationLeadMs, scaledMs, startupTimeoutMs} from './durations.js'
import {dropStoppedExtensions, extendToTimeout, oneShotSeconds} from './extend-rule.js'
import {isOver, type JobHealth, type JobOnChain, type Plan, type PlanInput} from './plan.js'
import {selectJobsToStop} from './scale-down.js'
import {planSimple} from './simple.js'

/** The tasks INFINITE wants now. */
export function planInfinite(input: PlanInput): Plan {
  const {deployment, jobs, openTasks, now} = input
  const working = ['STARTING', 'RUNNING', 'INSUFFICIENT_FUNDS'].includes(deployment.status)
  // Stopping stops every job, as SIMPLE does; a deployment not started (or refused its deposit) lists nothing.
  if (!working || deployment.started_at === null) return planSimple(input)
  const health = input.health ?? {}
  const plan: Plan = {tasks: [], cancel: [], stopping: [], events: []}
  const event = (type: string, message: string) => plan.events!.push({category: 'Event', type, message})
  const stopOpen = new Set(openTasks.filter((t) => t.task === 'STOP').map((t) => t.job))
  const stop = (job: JobOnChain) => {
    if (!stopOpen.has(job.job)) plan.tasks.push({task: 'STOP', job: job.job, due_at: now})
    plan.stopping.push(job.job)
  }
  const thisRun = jobs.filter((j) => j.created_at >= deployment.started_at!)

  for (const job of thisRun) if (job.justEnded && !job.stop_requested) event('JOB_ENDED', endedMessage(job))

  let active = jobs.filter((j) => !isOver(j.state) && !j.stop_requested)
  // A STOP now due that no plan asked for (the tunnel watch's, its grace over) is the manager's stop all the same:
  // marked so, the job's end is not taken for one on its own (no JOB_ENDED, no rapid completion), and its
  // replacement is listed at once.
  for (const t of openTasks)
    if (t.task === 'STOP' && t.due_at <= now && active.some((j) => j.job === t.job)) plan.stopping.push(t.job!)
  for (const job of active) {
    if (plan.stopping.includes(job.job)) continue
    const why = unhealthy(deployment, job, health[job.job], now)
    if (why) {
      event(why.type, why.message)
      stop(job)
    }
  }
  active = active.filter((j) => !plan.stopping.includes(j.job))

  // A raised timeout extends the running jobs first: their rotation then counts from the end it moves to.
  extendToTimeout(input, plan)
  const lead = rotationLeadMs(deployment)
  const end = (j: JobOnChain) => (j.timeStart + j.timeout + oneShotSeconds(input, plan, j)) * 1000
  const retiring = active.filter((j) => j.state === 'RUNNING' && now >= end(j) - lead).sort((a, b) => end(a) - end(b))
  const fresh = active.filter((j) => !retiring.includes(j))
  const lists = openTasks.filter((t) => t.task === 'LIST')
  let pending = lists.reduce((sum, t) => sum + (t.limit ?? 0), 0)

  // Fewer replicas wanted than run: the excess is stopped, queued jobs first, then the oldest (as SIMPLE).
  if (fresh.length + pending > deployment.replicas) {
    for (const t of lists) {
      if (t.status !== 'PENDING') continue
      plan.cancel.push(t.id)
      pending -= t.limit ?? 0
    }
    for (const job of selectJobsToStop(fresh, fresh.length + pending - deployment.replicas)) {
      event('JOB_SCALED_DOWN', `job ${job.job} stopped: the deployment wants ${deployment.replicas} replicas`)
      stop(job)
    }
  }

  // A retiring job is stopped only once enough fresh jobs serve in its place.
  const ready = fresh.filter((j) => isReady(j, health[j.job])).length
  const retire = Math.min(retiring.length, Math.max(0, ready + retiring.length - deployment.replicas))
  for (const job of retiring.slice(0, retire)) {
    const left = Math.max(0, Math.round((end(job) - now) / 1000))
    // At 0 replicas nothing replaces it: it is scaled down, not rotated.
    if (deployment.replicas === 0) event('JOB_SCALED_DOWN', `job ${job.job} stopped: the deployment wants 0 replicas`)
    else event('JOB_ROTATED', `job ${job.job} stopped ${left} s before its end: its replacement is ready`)
    stop(job)
  }

  dropStoppedExtensions(input, plan)

  const want = deployment.replicas - Math.min(fresh.length, deployment.replicas) - pending
  if (want > 0) {
    const cooldowns = input.cooldowns ?? DEFAULT_COOLDOWNS
    const streak = deployment.throttle_rounds ?? 0
    const rapid = rapidCompletions(deployment, thisRun)
    if (rapid === null) {
      plan.tasks.push({task: 'LIST', limit: want, due_at: now})
      if (streak !== 0) plan.throttleRounds = 0
    } else if (streak + 1 >= cooldowns.maxStreak) {
      // The round that reaches the streak stops the deployment rather than throttle once more (the network's).
      plan.status = 'STOPPING'
      plan.events!.push({
        category: 'Deployment',
        type: 'RAPID_COMPLETION_FAIL_SAFE',
        message:
          `deployment stopped to protect its funds: ${cooldowns.maxStreak} rounds in a row of jobs completing ` +
          `within ${minutes(deployment)} of starting (the last ${rapid})`,
      })
      return plan
    } else {
      const delay = rapidCooldownMs(deployment, cooldowns, streak)
      plan.tasks.push({task: 'LIST', limit: want, due_at: now + delay})
      plan.throttleRounds = streak + 1
      event(
        'RAPID_COMPLETION_THROTTLE',
        `the last ${rapid} completed jobs all ended within ${minutes(deployment)} of starting: the next listing ` +
          `waits ${seconds(delay)} (round ${streak + 1}; the fail-safe stops the deployment at ${cooldowns.maxStreak})`,
      )
    }
  }
  const queued = plan.tasks.some((t) => t.task === 'LIST') || pending > 0 || active.length > 0
  // At 0 replicas no job is what is wanted: the deployment runs with none, it has not finished.
  if (deployment.status === 'STARTING' && (queued || deployment.replicas === 0)) plan.status = 'RUNNING'
  return plan
}

/** The wait of the rapid-completion round after `streak` throttled ones, scaled, in ms. */
export function rapidCooldownMs(deployment: Pick<DeploymentRow, 'time_scale'>, cooldowns: Cooldowns, streak: number) {
  return scaledMs(deployment, cooldownMs(streak, cooldowns.rapidCompletion))
}

/**
 * Why a live job must be replaced now for its health, if it must: only its opt-in startup_timeout, gpunet's own
 * (the network's manager guesses nothing from time: a service still starting and one that never will look alike).
 * A service that came up and went away is the tunnel watch's (manager/tunnel-watch.ts).
 */
function unhealthy(
  deployment: DeploymentRow,
  job: JobOnChain,
  health: JobHealth | undefined,
  now: number,
): {type: string; message: string} | null {
  if (job.state !== 'RUNNING' || !health || health.cameUp) return null
  const startup = startupTimeoutMs(deployment)
  if (startup !== null && now - job.timeStart * 1000 >= startup)
    return {
      type: 'JOB_STARTUP_TIMEOUT',
      message: `job ${job.job} did not come online within ${seconds(startup)} of starting: stopped and replaced`,
    }
  return null
}

/** A running job serves: the node says its service is online, or nobody watches it (no exposed port). */
function isReady(job: JobOnChain, health: JobHealth | undefined): boolean {
  return job.state === 'RUNNING' && (health === undefined || health.online !== false)
}

/**
 * How many jobs were rapid when the latest completions all were, else null. As the network's manager counts them:
 * of this run's COMPLETED jobs (one the manager stopped, by a scale-down, a rotation, a replacement or a stop, is
 * short by design and says nothing of the workload), the latest replicas x 3 by their end on chain; rapid when
 * there are at least 3 and each ran, by its start and end on chain, under 5 minutes (a job missing either stamp is
 * not rapid).
 */
export function rapidCompletions(deployment: DeploymentRow, jobs: JobOnChain[]): number | null {
  const latest = jobs
    .filter((j) => j.state === 'COMPLETED' && !j.stop_requested)
    .sort((a, b) => (b.timeEnd ?? 0) - (a.timeEnd ?? 0) || b.created_at - a.created_at)
    .slice(0, deployment.replicas * INFINITE.rapidJobsPerReplica)
  const threshold = scaledMs(deployment, INFINITE.rapidMs)
  const ranUnder = (j: JobOnChain) =>
    j.timeStart > 0 && (j.timeEnd ?? 0) > 0 && (j.timeEnd! - j.timeStart) * 1000 < threshold
  return latest.length >= INFINITE.rapidJobsPerReplica && latest.every(ranUnder) ? latest.length : null
}

function endedMessage(job: JobOnChain): string {
  const state = job.state.toLowerCase()
  if (job.timeStart === 0) return `job ${job.job} was ${state} before a node took it: a replacement is listed`
  const end = job.timeEnd ?? 0
  if (end === 0) return `job ${job.job} ${state}: a replacement is listed`
  const ran = end - job.timeStart
  if (end >= job.timeStart + job.timeout)
    return `job ${job.job} ran to its timeout (${ran} s) before a replacement was ready`
  return `job ${job.job} ${state} after ${ran} s, before its timeout: a replacement is listed`
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`
}

function minutes(deployment: DeploymentRow): string {
  return seconds(scaledMs(deployment, INFINITE.rapidMs))
}
