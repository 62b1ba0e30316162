/**
 * SIMPLE-EXTEND: as SIMPLE, and each running job is extended by the deployment's full timeout once it is within
 * the extend lead of its end (timeout - clamp(10% of the timeout, 60 s, 300 s), every duration scaled).
 */
import {extendLeadMs} from './durations.js'
import {isOver, type Plan, type PlanInput} from './plan.js'
import {planSimple} from './simple.js'

/** The tasks SIMPLE-EXTEND wants now. */
export function planSimpleExtend(input: PlanInput): Plan {
  const plan = planSimple(input)
  const {deployment, jobs, openTasks} = input
  if (deployment.status !== 'RUNNING' && deployment.status !== 'INSUFFICIENT_FUNDS') return plan
  const extending = new Set(openTasks.filter((t) => t.task === 'EXTEND').map((t) => t.job))
  const stopping = new Set(plan.stopping)
  const over = new Set(jobs.filter((j) => isOver(j.state)).map((j) => j.job))
  for (const t of openTasks) {
    const moot = t.task === 'EXTEND' && t.status === 'PENDING' && (over.has(t.job!) || stopping.has(t.job!))
    if (moot && !plan.cancel.includes(t.id)) plan.cancel.push(t.id)
  }
  const lead = extendLeadMs(deployment)
  for (const job of jobs) {
    if (job.state !== 'RUNNING' || job.stop_requested || stopping.has(job.job) || extending.has(job.job)) continue
    const end = (job.timeStart + job.timeout) * 1000
    plan.tasks.push({task: 'EXTEND', job: job.job, due_at: end - lead})
  }
  return plan
}
