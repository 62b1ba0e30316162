/**
 * SIMPLE: list the replicas once. A replica-count change lists the shortfall or stops the excess (queued jobs
 * first, then the newest); a job that ends on its own is not replaced, and once every job has ended the deployment
 * is STOPPED. A stop stops every job.
 */
import type {JobOnChain, Plan, PlanInput} from './plan.js'
import {isOver} from './plan.js'

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
    // Queued jobs first (nothing runs on them yet), then the newest.
    const excess = [...active]
      .sort((a, b) => Number(a.state === 'RUNNING') - Number(b.state === 'RUNNING') || b.created_at - a.created_at)
      .slice(0, Math.max(0, active.length + pending - deployment.replicas))
    for (const job of excess) stop(job)
  }
  const want = deployment.replicas - active.length - pending - endedOnOwn
  if (want > 0) plan.tasks.push({task: 'LIST', limit: want, due_at: now})

  const queued = plan.tasks.some((t) => t.task === 'LIST') || pending > 0 || active.length > 0
  if (deployment.status === 'STARTING' && queued) plan.status = 'RUNNING'
  else if (deployment.status === 'RUNNING' && !queued && live.length === 0) {
    // Every job has ended: what is left open (an extension of an ended job) has nothing to act on.
    const settling = openTasks.some((t) => t.status === 'PROCESSING')
    if (!settling) {
      plan.status = 'STOPPED'
      plan.cancel = openTasks.map((t) => t.id)
    }
  }
  return plan
}
