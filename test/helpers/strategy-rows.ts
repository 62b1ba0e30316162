/** Rows for the pure strategy tests: a deployment, its tasks and its jobs as the chain shows them, at a fixed now. */
import type {JobOnChain, PlanInput} from '../../src/lib/deployments/strategies/plan.js'
import type {DeploymentRow, TaskRow} from '../../src/lib/deployments/types.js'

/** A RUNNING deployment `d1` of 2 replicas, one hour's timeout, started a minute before `now`. */
export function deploymentRow(now: number, change: Partial<DeploymentRow> = {}): DeploymentRow {
  return {
    id: 'd1',
    name: 'svc',
    owner: 'o',
    vault: 'v',
    market: 'm',
    status: 'RUNNING',
    replicas: 2,
    timeout: 60,
    strategy: 'SIMPLE-EXTEND',
    time_scale: 1,
    confidential: false,
    active_revision: 1,
    started_at: now - 60_000,
    created_at: now - 120_000,
    updated_at: now - 60_000,
    ...change,
  }
}

let ids = 0

/** A PENDING LIST task of `d1`, due at `now`, with an id no other task of the run has. */
export function taskRow(now: number, change: Partial<TaskRow> = {}): TaskRow {
  return {
    id: ++ids,
    deployment: 'd1',
    task: 'LIST',
    status: 'PENDING',
    job: null,
    limit: null,
    revision: 1,
    attempts: 0,
    due_at: now,
    in_flight: null,
    tx: null,
    error: null,
    created_at: now,
    updated_at: now,
    ...change,
  }
}

/** A RUNNING job with a one-hour timeout, started `ago` seconds before `now`. */
export function chainJob(now: number, name: string, ago: number, change: Partial<JobOnChain> = {}): JobOnChain {
  return {
    job: name,
    state: 'RUNNING',
    timeStart: now / 1000 - ago,
    timeout: 3600,
    created_at: now - ago * 1000 - 5000,
    stop_requested: false,
    ...change,
  }
}

/** What a strategy is given: `deployment` with no jobs and no open tasks, at `now`. */
export function planInput(now: number, deployment: DeploymentRow, change: Partial<PlanInput> = {}): PlanInput {
  return {deployment, jobs: [], openTasks: [], now, ...change}
}
