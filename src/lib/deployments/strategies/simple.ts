/**
 * SIMPLE: list the replicas once. A replica-count change lists the shortfall or stops the excess (queued jobs
 * first, then the oldest running: scale-down.ts); a job that ends on its own is not replaced, and once every job has
 * ended the deployment is STOPPED. At 0 replicas it stays RUNNING with no job (nothing listed, nothing extended),
 * until a count above 0 lists again. A stop stops every job.
 */
import type {JobOnChain, Plan, PlanInput} from './plan.js'
import {isOver} from './plan.js'
import {selectJobsToStop} from './scale-down.js'

/** The tasks SIMPLE wants now. */
export function planSimple({deployment, jobs, openTasks, now}: PlanInput): Plan {
  const plan: Plan = {tasks: [], cancel: [], stopping: []}
  const live = jobs.filter((j) => !isOver(j.state))
  const stopOpen = new Set(openTasks.filter((t) => t.task === 'STOP').map((t) => t.job))
  const stop = (job: JobOnChain) => {
    if (!stopOpen.has(job.job)) plan.tasks.push({task: 'STOP', job: job.job, due_at: now})
    if (!job.stop_requested) plan.stopping.push(job.job)
  }

  if (deployment.status === 'STOPPING') {
    plan.cancel = openTasks.filter((t) => t.task !== 'STOP' && t.status === 'PENDING').map((t) => t.id)
    for (const job of live) stop(job)
    const settling = openTasks.some((t) => t.status === 'PROCESSING' && t.task !== 'STOP')
    if (live.length === 0 && !settling) plan.status = 'STOPPED'
    return plan
  }
  if (!['STARTING', 'RUNNING', 'INSUFFICIENT_FUNDS'].includes(deployment.status)) return plan
  // A start refused for want of the deposit started nothing: funding the vault alone must not list anything.
  if (deployment.started_at === null) return plan

  const lists = openTasks.filter((t) => t.task === 'LIST')
  let pending = lists.reduce((sum, t) => sum + (t.limit ?? 0), 0)
  const thisRun = jobs.filter((j) => deployment.started_at !== null && j.created_at >= deployment.started_at)
  const endedOnOwn = thisRun.filter((j) => isOver(j.state) && !j.stop_requested).length
  const active = live.filter((j) => !j.stop_requested)

  if (active.length + pending > deployment.replicas) {
    for (const t of lists) {
      if (t.status !== 'PENDING') continue
      plan.cancel.push(t.id)
      pending -= t.limit ?? 0
    }
    for (const job of selectJobsToStop(active, active.length + pending - deployment.replicas)) stop(job)
  }
  const want = deployment.replicas - active.length - pending - endedOnOwn
  if (want > 0) plan.tasks.push({task: 'LIST', limit: want, due_at: now})

  const queued = plan.tasks.some((t) => t.task === 'LIST') || pending > 0 || active.length > 0
  // At 0 replicas no job is what is wanted: the deployment runs with none, it has not finished.
  const idle = deployment.replicas === 0
  if (deployment.status === 'STARTING' && (queued || idle)) plan.status = 'RUNNING'
  else if (deployment.status === 'RUNNING' && !queued && !idle && live.length === 0) {
    // Every job has ended: what is left open (an extension of an ended job) has nothing to act on.
    const settling = openTasks.some((t) => t.status === 'PROCESSING')
    if (!settling) {
      plan.status = 'STOPPED'
      plan.cancel = openTasks.map((t) => t.id)
    }
  }
  return plan
}
