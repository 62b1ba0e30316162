/**
 * "Extending a running deployment extends its current jobs", as the network's manager does it (its
 * deploymentTimeoutUpdate): once a RUNNING INFINITE or SIMPLE-EXTEND deployment's timeout is raised, each RUNNING
 * job whose timeout on chain is below the new one gets one EXTEND of exactly the difference, and the job's own
 * follow-up moves by as much: INFINITE's rotation counts from the job's end, which the extension moves; the next
 * EXTEND of SIMPLE-EXTEND's chain is dropped and planned again from the new end once the extension has landed (with
 * the new timeout's lead; dropped, not moved, so that a restart in between cannot move it twice). A
 * lower timeout leaves the current jobs alone (the program never shortens one); new jobs take it.
 *
 * It is a rule on what the chain shows, not on the change itself: a job is extended while its timeout on chain is
 * below the deployment's, so a manager killed between the change and the task plans it again after a restart, and a
 * job listed just before the change with the old timeout is brought to the new one too.
 */
import {jobTimeoutSeconds} from './durations.js'
import type {JobOnChain, Plan, PlanInput} from './plan.js'

/** Adds to `plan` the one-shot EXTENDs the rule wants now (its jobs in plan.stopping are left alone). */
export function extendToTimeout(input: PlanInput, plan: Plan): void {
  const {deployment, jobs, openTasks, now} = input
  if (deployment.status !== 'RUNNING') return
  const target = jobTimeoutSeconds(deployment)
  for (const job of jobs) {
    if (job.state !== 'RUNNING' || job.stop_requested || plan.stopping.includes(job.job)) continue
    const delta = target - job.timeout
    if (delta <= 0) continue
    const open = openTasks.filter((t) => t.task === 'EXTEND' && t.job === job.job && !plan.cancel.includes(t.id))
    // An extension in flight settles first (it may bring the job past the new timeout); a one-shot open is this one.
    if (open.some((t) => t.status === 'PROCESSING' || t.limit !== null)) continue
    for (const t of open) plan.cancel.push(t.id)
    plan.tasks.push({task: 'EXTEND', job: job.job, seconds: delta, due_at: now})
  }
}

/** The seconds the one-shot extensions open or just planned add to a job's end (INFINITE counts its rotation so). */
export function oneShotSeconds(input: PlanInput, plan: Plan, job: JobOnChain): number {
  let seconds = 0
  for (const t of input.openTasks)
    if (t.task === 'EXTEND' && t.job === job.job && t.limit !== null && !plan.cancel.includes(t.id)) seconds += t.limit
  for (const t of plan.tasks) if (t.task === 'EXTEND' && t.job === job.job) seconds += t.seconds ?? 0
  return seconds
}

/** Drops the extensions of jobs the plan stops: an extension of a job being stopped would pay for nothing. */
export function dropStoppedExtensions(input: PlanInput, plan: Plan): void {
  plan.tasks = plan.tasks.filter((t) => t.task !== 'EXTEND' || !plan.stopping.includes(t.job))
  for (const t of input.openTasks)
    if (t.task === 'EXTEND' && t.status === 'PENDING' && plan.stopping.includes(t.job!) && !plan.cancel.includes(t.id))
      plan.cancel.push(t.id)
}
