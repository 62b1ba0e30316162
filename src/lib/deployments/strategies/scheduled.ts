/**
 * SCHEDULED: the replicas are listed at each time of the deployment's 5-field cron `schedule` (UTC); each job runs
 * its timeout. The next listing waits as a PENDING task due at the next time, so `tasks` shows when it comes. A
 * stop stops every job, as SIMPLE's does. At 0 replicas it stays RUNNING and lists nothing: the waiting listing is
 * dropped and its jobs stopped as SIMPLE's scale-down stops them; a count above 0 waits for the next time again.
 */
import {nextScheduled} from '../schedule.js'
import type {Plan, PlanInput} from './plan.js'
import {planSimple} from './simple.js'

/** The tasks SCHEDULED wants now. */
export function planScheduled(input: PlanInput): Plan {
  const {deployment, openTasks, now} = input
  const working = ['STARTING', 'RUNNING', 'INSUFFICIENT_FUNDS'].includes(deployment.status)
  const idle = deployment.replicas === 0
  if (!working || deployment.started_at === null || !deployment.schedule || idle) return planSimple(input)
  const plan: Plan = {tasks: [], cancel: [], stopping: []}
  // One listing waits at a time; once it has run, the next is the schedule's next time after now.
  if (!openTasks.some((t) => t.task === 'LIST')) {
    const next = nextScheduled(deployment.schedule, now)
    if (next !== null) plan.tasks.push({task: 'LIST', limit: deployment.replicas, due_at: next})
  }
  if (deployment.status === 'STARTING') plan.status = 'RUNNING'
  return plan
}
