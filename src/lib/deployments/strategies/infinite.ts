/**
 * INFINITE, as the network's manager runs it: the replicas are kept running for ever. A replacement is listed
 * `rotation_time` before a job's end, and the old job is stopped once its replacement is ready (so the service has
 * no gap and the old job is paid only for the time it ran). A job that ends on its own, misses its startup_timeout
 * or whose service stays offline for the lost window is replaced, with an event naming why. Rapid completions
 * throttle the listings: when the last replicas x 3 ended jobs all ran under 5 minutes, the next listing waits
 * (60 s, doubling, at most 1 h), and after 8 such rounds the fail-safe stops the deployment. Every duration is
 * divided by the deployment's time_scale.
 */
import type {DeploymentRow} from '../types.js'
import {INFINITE, lostWindowMs, rotationLeadMs, scaledMs, startupTimeoutMs, throttleDelayMs} from './durations.js'
import {isOver, type JobHealth, type JobOnChain, type Plan, type PlanInput} from './plan.js'
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
  for (const job of active) {
    const why = unhealthy(deployment, job, health[job.job], now)
    if (why) {
      event(why.type, why.message)
      stop(job)
    }
  }
  active = active.filter((j) => !plan.stopping.includes(j.job))

  const lead = rotationLeadMs(deployment)
  const end = (j: JobOnChain) => (j.timeStart + j.timeout) * 1000
  const retiring = active.filter((j) => j.state === 'RUNNING' && now >= end(j) - lead).sort((a, b) => end(a) - end(b))
  const fresh = active.filter((j) => !retiring.includes(j))
  const lists = openTasks.filter((t) => t.task === 'LIST')
  let pending = lists.reduce((sum, t) => sum + (t.limit ?? 0), 0)

  // Fewer replicas wanted than run: the excess is stopped, queued jobs first, then the newest (as SIMPLE).
  if (fresh.length + pending > deployment.replicas) {
    for (const t of lists) {
      if (t.status !== 'PENDING') continue
      plan.cancel.push(t.id)
      pending -= t.limit ?? 0
    }
    const excess = [...fresh]
      .sort((a, b) => Number(a.state === 'RUNNING') - Number(b.state === 'RUNNING') || b.created_at - a.created_at)
      .slice(0, Math.max(0, fresh.length + pending - deployment.replicas))
    for (const job of excess) {
      event('JOB_SCALED_DOWN', `job ${job.job} stopped: the deployment wants ${deployment.replicas} replicas`)
      stop(job)
    }
  }

  // A retiring job is stopped only once enough fresh jobs serve in its place.
  const ready = fresh.filter((j) => isReady(j, health[j.job])).length
  const retire = Math.min(retiring.length, Math.max(0, ready + retiring.length - deployment.replicas))
  for (const job of retiring.slice(0, retire)) {
    const left = Math.max(0, Math.round((end(job) - now) / 1000))
    event('JOB_ROTATED', `job ${job.job} stopped ${left} s before its end: its replacement is ready`)
    stop(job)
  }

  const want = deployment.replicas - Math.min(fresh.length, deployment.replicas) - pending
  if (want > 0) {
    const rounds = deployment.throttle_rounds ?? 0
    if (!rapidCompletions(deployment, thisRun)) {
      plan.tasks.push({task: 'LIST', limit: want, due_at: now})
      if (rounds !== 0) plan.throttleRounds = 0
    } else if (rounds >= INFINITE.failSafeRounds) {
      plan.status = 'STOPPING'
      plan.events!.push({
        category: 'Deployment',
        type: 'RAPID_COMPLETION_FAIL_SAFE',
        message:
          `deployment stopped: the last ${rapidWindow(deployment)} jobs all ended within ${minutes(deployment)} of ` +
          `starting, after ${rounds} throttled rounds`,
      })
      return plan
    } else {
      const delay = throttleDelayMs(deployment, rounds)
      plan.tasks.push({task: 'LIST', limit: want, due_at: now + delay})
      plan.throttleRounds = rounds + 1
      event(
        'RAPID_COMPLETION_THROTTLE',
        `the last ${rapidWindow(deployment)} jobs all ended within ${minutes(deployment)} of starting: the next ` +
          `listing waits ${seconds(delay)} (round ${rounds + 1} of ${INFINITE.failSafeRounds})`,
      )
    }
  }
  const queued = plan.tasks.some((t) => t.task === 'LIST') || pending > 0 || active.length > 0
  if (deployment.status === 'STARTING' && queued) plan.status = 'RUNNING'
  return plan
}

/** Why a live job must be replaced now for its health, if it must. */
function unhealthy(
  deployment: DeploymentRow,
  job: JobOnChain,
  health: JobHealth | undefined,
  now: number,
): {type: string; message: string} | null {
  if (job.state !== 'RUNNING' || !health) return null
  const startup = startupTimeoutMs(deployment)
  if (startup !== null && health.onlineSince === null && now - job.timeStart * 1000 >= startup)
    return {
      type: 'JOB_STARTUP_TIMEOUT',
      message: `job ${job.job} did not come online within ${seconds(startup)} of starting: stopped and replaced`,
    }
  const lost = lostWindowMs(deployment)
  if (health.offlineSince !== null && now - health.offlineSince >= lost)
    return {
      type: 'JOB_UNHEALTHY',
      message: `job ${job.job} failed its health checks for ${seconds(now - health.offlineSince)}: stopped and replaced`,
    }
  return null
}

/** A running job serves: the node says its service is online, or nobody watches it (no exposed port). */
function isReady(job: JobOnChain, health: JobHealth | undefined): boolean {
  return job.state === 'RUNNING' && (health === undefined || health.online !== false)
}

/** How many of the latest ended jobs the throttle looks at. */
function rapidWindow(deployment: DeploymentRow): number {
  return deployment.replicas * INFINITE.rapidJobsPerReplica
}

/** True when the latest replicas x 3 jobs that ran and ended (by the chain's clock) all ran under 5 minutes. */
function rapidCompletions(deployment: DeploymentRow, jobs: JobOnChain[]): boolean {
  const ran = jobs
    .filter((j) => isOver(j.state) && j.timeStart > 0 && (j.timeEnd ?? 0) > 0)
    .sort((a, b) => b.timeEnd! - a.timeEnd!)
    .slice(0, rapidWindow(deployment))
  const rapid = scaledMs(deployment, INFINITE.rapidMs)
  return ran.length === rapidWindow(deployment) && ran.every((j) => (j.timeEnd! - j.timeStart) * 1000 < rapid)
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
