/**
 * SIMPLE-EXTEND: as SIMPLE, and each running job is extended by the deployment's full timeout once it is within
 * the extend lead of its end (timeout - clamp(10% of the timeout, 60 s, 300 s), every duration scaled). A raised
 * timeout extends the running jobs to it at once (extend-rule.ts). At 0 replicas nothing is extended: every job is
 * stopped, as SIMPLE stops them.
 */
import {extendLeadMs} from './durations.js'
import {dropStoppedExtensions, extendToTimeout} from './extend-rule.js'
import {isOver, type Plan, type PlanInput} from './plan.js'
import {planSimple} from './simple.js'

/** The tasks SIMPLE-EXTEND wants now. */
export function planSimpleExtend(input: PlanInput): Plan {
  const plan = planSimple(input)
  const {deployment, jobs, openTasks} = input
  if (deployment.status !== 'RUNNING' && deployment.status !== 'INSUFFICIENT_FUNDS') return plan
  const stopping = new Set(plan.stopping)
  const over = new Set(jobs.filter((j) => isOver(j.state)).map((j) => j.job))
  for (const t of openTasks) {
    const moot = t.task === 'EXTEND' && t.status === 'PENDING' && (over.has(t.job!) || stopping.has(t.job!))
    if (moot && !plan.cancel.includes(t.id)) plan.cancel.push(t.id)
  }
  extendToTimeout(input, plan)
  // The jobs with an extension open (or one the rule just planned) wait for it before the next of the chain.
  const extending = new Set([
    ...openTasks.filter((t) => t.task === 'EXTEND' && !plan.cancel.includes(t.id)).map((t) => t.job),
    ...plan.tasks.filter((t) => t.task === 'EXTEND').map((t) => (t as {job: string}).job),
  ])
  const lead = extendLeadMs(deployment)
  for (const job of jobs) {
    if (job.state !== 'RUNNING' || job.stop_requested || stopping.has(job.job) || extending.has(job.job)) continue
    const end = (job.timeStart + job.timeout) * 1000
    plan.tasks.push({task: 'EXTEND', job: job.job, due_at: end - lead})
  }
  dropStoppedExtensions(input, plan)
  return plan
}
