/** What a strategy is given and what it answers: the tasks due for one deployment, from its rows and the chain. */
import type {Cooldowns} from '../cooldowns.js'
import type {DeploymentRow, DeploymentStatus, JobState, TaskKind, TaskRow} from '../types.js'

/** A job of the deployment as the chain shows it now, with what the manager recorded of it. */
export interface JobOnChain {
  job: string
  state: JobState
  /** Unix seconds a node started it; 0 while queued. */
  timeStart: number
  /** Its timeout on chain, in seconds. */
  timeout: number
  /** Its own price on chain (token base units a second, decimal text); null when its row has none yet. */
  price?: string | null
  /** When the manager listed it (ms). */
  created_at: number
  stop_requested: boolean
  /** Unix seconds it ended on chain; 0 while it runs (or when its account was closed). */
  timeEnd?: number
  /** True in the one pass that first sees it over. */
  justEnded?: boolean
}

/** What the manager saw of a running job's service (the node's continuous checks, or its own probe of the URL). */
export interface JobHealth {
  /** Whether the service answers now; null when nobody can say (no node API, no exposed port). */
  online: boolean | null
  /** Whether it ever came up: online now, or its deployment proxy served once (the store's `tunnel`). */
  cameUp: boolean
}

/** An event a plan asks the worker to record. */
export interface PlanEvent {
  category: 'Deployment' | 'Event'
  type: string
  message: string
}

export interface PlanInput {
  deployment: DeploymentRow
  jobs: JobOnChain[]
  /** The deployment's PENDING and PROCESSING tasks. */
  openTasks: TaskRow[]
  /** ms */
  now: number
  /** Running jobs' health, by job (strategies that watch it: INFINITE); absent for the others. */
  health?: Record<string, JobHealth>
  /** The manager's cooldowns (INFINITE's rapid-completion throttle); absent, the network's defaults. */
  cooldowns?: Cooldowns
}

export type DueTask =
  | {task: 'LIST'; limit: number; due_at: number}
  /** `seconds`: a one-shot EXTEND of that many seconds (extend-rule.ts); absent, one of the deployment's timeout. */
  | {task: Exclude<TaskKind, 'LIST'>; job: string; due_at: number; seconds?: number}

export interface Plan {
  tasks: DueTask[]
  /** Open tasks no longer wanted (PENDING ones only: one with a transaction in flight is settled first). */
  cancel: number[]
  /** The deployment's new state, when it changes. */
  status?: DeploymentStatus
  /** Jobs the plan stops: marked so, their end is not taken for one on their own. */
  stopping: string[]
  /** Events to record, naming why (a replica replaced, a listing throttled). */
  events?: PlanEvent[]
  /** The deployment's rapid-completion streak, when it changes (INFINITE). */
  throttleRounds?: number
}

/** A strategy: a pure function of the deployment's rows, the chain's view of its jobs and the time. */
export type Strategy = (input: PlanInput) => Plan

/** True once a job can no longer change. */
export function isOver(state: JobState): boolean {
  return state === 'COMPLETED' || state === 'STOPPED'
}
