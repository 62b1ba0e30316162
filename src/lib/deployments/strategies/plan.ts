/** What a strategy is given and what it answers: the tasks due for one deployment, from its rows and the chain. */
import type {DeploymentRow, DeploymentStatus, JobState, TaskKind, TaskRow} from '../types.js'

/** A job of the deployment as the chain shows it now, with what the manager recorded of it. */
export interface JobOnChain {
  job: string
  state: JobState
  /** Unix seconds a node started it; 0 while queued. */
  timeStart: number
  /** Its timeout on chain, in seconds. */
  timeout: number
  /** When the manager listed it (ms). */
  created_at: number
  stop_requested: boolean
}

export interface PlanInput {
  deployment: DeploymentRow
  jobs: JobOnChain[]
  /** The deployment's PENDING and PROCESSING tasks. */
  openTasks: TaskRow[]
  /** ms */
  now: number
}

export type DueTask =
  {task: 'LIST'; limit: number; due_at: number} | {task: Exclude<TaskKind, 'LIST'>; job: string; due_at: number}

export interface Plan {
  tasks: DueTask[]
  /** Open tasks no longer wanted (PENDING ones only: one with a transaction in flight is settled first). */
  cancel: number[]
  /** The deployment's new state, when it changes. */
  status?: DeploymentStatus
  /** Jobs the plan stops: marked so, their end is not taken for one on their own. */
  stopping: string[]
}

/** A strategy: a pure function of the deployment's rows, the chain's view of its jobs and the time. */
export type Strategy = (input: PlanInput) => Plan

/** True once a job can no longer change. */
export function isOver(state: JobState): boolean {
  return state === 'COMPLETED' || state === 'STOPPED'
}
