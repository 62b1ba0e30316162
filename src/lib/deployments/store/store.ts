/**
 * What the deployment manager stores, behind one interface: one SQLite file for one manager (sqlite-store.ts), or
 * PostgreSQL shared by several managers (pg-store.ts). test/lib/deployments/store-contract.test.ts runs the same
 * suite against both.
 */
import {ExitCode, GpunetError} from '../../errors.js'
import type {ApiKeyRows} from './api-keys.js'
import type {
  DeploymentRow,
  DeploymentStatus,
  EventRow,
  InFlight,
  JobRow,
  JobState,
  RevisionRow,
  Strategy,
  TaskKind,
  TaskRow,
  TaskStatus,
  VaultRow,
} from '../types.js'

/** The filters and page of `GET /api/deployments`. */
export interface DeploymentQuery {
  owner: string
  offset: number
  limit: number
  order: 'asc' | 'desc'
  /** Any of these (the API's comma-separated list). */
  statuses?: DeploymentStatus[]
  strategies?: Strategy[]
  vault?: string
  /** Part of the name or the id. */
  search?: string
  id?: string
  name?: string
  /** ms */
  createdAfter?: number
  createdBefore?: number
}

/** What the worker's tick reads of one deployment. */
export interface Workload {
  deployment: DeploymentRow
  jobs: JobRow[]
  /** PENDING or PROCESSING, by id. */
  openTasks: TaskRow[]
}

/** A task to add: LIST with a limit, EXTEND and STOP with a job. */
export type NewTask = Pick<TaskRow, 'deployment' | 'task' | 'job' | 'limit' | 'revision' | 'due_at'>

/** A new task's row, as every store inserts it: PENDING, never tried, nothing in flight. */
export function newTaskRow(task: NewTask, now: number): Omit<TaskRow, 'id'> {
  return {
    ...task,
    status: 'PENDING',
    attempts: 0,
    in_flight: null,
    tx: null,
    error: null,
    created_at: now,
    updated_at: now,
  }
}

/**
 * A deployment deleted while a request changed it (both passed their checks on the row they read): the change is
 * answered as one sent after the delete would be, 404.
 */
export function deploymentGone(id: string): GpunetError {
  return new GpunetError('not_found', `no deployment ${id}`, {exitCode: ExitCode.NOT_FOUND})
}

/** A LIST task's change once one job of it is recorded: one fewer to list, DONE when none is left. */
export function listedTaskChange(task: TaskRow, tx: string): Partial<TaskRow> {
  const left = (task.limit ?? 1) - 1
  return left > 0
    ? {limit: left, in_flight: null, tx, status: 'PENDING', error: null}
    : {limit: 0, in_flight: null, tx, status: 'DONE', error: null}
}

/**
 * The store's figures of `/metrics` (api/metrics.ts), counted by the database in one grouped read each, so every
 * manager on one database answers the same: no owner, name, id or key among them.
 */
export interface MetricCounts {
  deployments: {status: DeploymentStatus; strategy: Strategy; count: number}[]
  /** `failures`: the failed tries of those tasks (a task's attempts count its failures). */
  tasks: {task: TaskKind; status: TaskStatus; count: number; failures: number}[]
  jobs: {state: JobState; count: number}[]
  /** Vault addresses (public on chain), oldest first, at most the number asked for; vaultTotal counts them all. */
  vaults: string[]
  vaultTotal: number
}

/** Every method is asynchronous, so a store over the network (PostgreSQL) fits the same interface. */
/** One gateway's traffic of one deployment (its lowercased id), as it last wrote it. */
export interface GatewayFigures {
  deployment: string
  inFlight: number
  held: number
}

/** One gateway's requests in flight per job (lowercased addresses, as the gateway counts them), as it last wrote them. */
export interface GatewayJobs {
  gateway: string
  inFlight: Record<string, number>
  /** When it wrote them: unix ms, the store's clock (the database's in PostgreSQL). */
  at: number
}

export interface DeploymentStore {
  /** Where the API keys are kept (api-keys.ts). */
  readonly apiKeyRows: ApiKeyRows
  /** Where the store is, for logs: a file, or a database URL without its password. */
  readonly where: string
  /** Stores a deployment with its first revision, and its new vault (null: one of the owner's vaults it shares). */
  createDeployment(deployment: DeploymentRow, revision: RevisionRow, vault: VaultRow | null): Promise<void>
  deployment(id: string): Promise<DeploymentRow | undefined>
  deployments(query: DeploymentQuery): Promise<{rows: DeploymentRow[]; total: number}>
  /** The deployments in the given states (the worker's). */
  deploymentsIn(statuses: readonly DeploymentStatus[]): Promise<DeploymentRow[]>
  /** Changes a deployment; throws deploymentGone when it is no longer there. */
  updateDeployment(id: string, change: Partial<Omit<DeploymentRow, 'id'>>, now: number): Promise<DeploymentRow>
  /**
   * Changes a deployment only while its status is one of `from`, in one statement, so of requests that read the
   * same status at once one changes it; undefined when it is gone or its status is none of them by then.
   */
  moveDeployment(
    id: string,
    from: readonly DeploymentStatus[],
    change: Partial<Omit<DeploymentRow, 'id'>>,
    now: number,
  ): Promise<DeploymentRow | undefined>
  deleteDeployment(id: string): Promise<void>
  revisions(deployment: string): Promise<RevisionRow[]>
  revision(deployment: string, revision: number): Promise<RevisionRow | undefined>
  /** Adds a revision and makes it the active one, in one commit (revise); answers the deployment. */
  addRevision(revision: RevisionRow, now: number): Promise<DeploymentRow>
  jobs(deployment: string): Promise<JobRow[]>
  job(address: string): Promise<JobRow | undefined>
  updateJob(address: string, change: Partial<Omit<JobRow, 'job'>>, now: number): Promise<void>
  tasks(deployment: string, options?: {open?: boolean}): Promise<TaskRow[]>
  /**
   * The rows, jobs and open tasks of many deployments in a few set-based reads (the worker's tick), instead of a
   * round trip per deployment; a deployment not found is left out.
   */
  workloads(deployments: readonly string[]): Promise<Map<string, Workload>>
  /** Open tasks (PENDING or PROCESSING) due by `now`, PROCESSING first, oldest first. */
  dueTasks(now: number): Promise<TaskRow[]>
  addTask(task: NewTask, now: number): Promise<TaskRow>
  updateTask(
    id: number,
    change: Partial<Pick<TaskRow, 'status' | 'limit' | 'attempts' | 'due_at' | 'tx' | 'error'>>,
    now: number,
  ): Promise<void>
  /** Saves the transaction about to be sent (PROCESSING), or forgets it (null) once it can no longer land. */
  saveInFlight(id: number, inFlight: InFlight | null, now: number): Promise<void>
  /**
   * Records a listed job and the LIST task's progress in one commit. With `holder`, the commit first checks that
   * `holder` still holds the deployment's lease, and throws `lease_lost` (nothing recorded) when it does not.
   */
  recordListed(task: TaskRow, job: JobRow, tx: string, now: number, holder?: string): Promise<void>
  events(deployment: string): Promise<EventRow[]>
  addEvent(event: Omit<EventRow, 'created_at'>, now: number): Promise<void>
  vault(address: string): Promise<VaultRow | undefined>
  /** Stores a vault made apart from any deployment (the network's `vaults/create`). */
  addVault(vault: VaultRow): Promise<void>
  vaults(owner: string): Promise<VaultRow[]>
  /** Any one vault (the oldest): what a vault key is tried on when the database holds no key check yet. */
  anyVault(): Promise<VaultRow | undefined>
  /**
   * Takes (or renews) the lease of a deployment for `holder` for `forMs` from now, unless another holder's lease
   * runs past now; true when `holder` holds it. Managers sharing a database plan and run a deployment's tasks only
   * under its lease, so no two work on one deployment at once (manager-lease.ts). "Now" is the store's clock: the
   * database's in PostgreSQL (managers' clocks may differ), `now` (the one manager's) in SQLite.
   */
  claimDeployment(id: string, holder: string, forMs: number, now: number): Promise<boolean>
  /** Gives the lease up early (when `holder` still holds it). */
  releaseDeployment(id: string, holder: string): Promise<void>
  /** The leases running past now (the store's clock, as in claimDeployment): who works on which deployment. */
  leases(now: number): Promise<{deployment: string; holder: string}[]>
  /**
   * Replaces what the gateway `gateway` last wrote of its traffic by `figures` (deployments by lowercased id, as host
   * names are; one left out is at zero), timestamped now (the store's clock): how the gateways in front of several
   * managers on one PostgreSQL tell the one holding a deployment's lease its traffic (autoscale/store-load.ts).
   */
  writeLoad(gateway: string, figures: readonly GatewayFigures[], now: number): Promise<void>
  /**
   * The figures of every gateway but `except` written within `freshMs` of now (the store's clock), one row per
   * gateway and deployment; `deployment` (lowercased) narrows them to one.
   */
  readLoad(freshMs: number, except: string, now: number, deployment?: string): Promise<GatewayFigures[]>
  /**
   * Marks a job draining (its draining_at, the store's clock) unless a drain marked it already; answers the mark
   * kept (the first one), or undefined when the store has no such job. Every gateway on the store reads it with the
   * job's row and sends the job no new request (draining.ts).
   */
  markDraining(job: string, now: number): Promise<number | undefined>
  /**
   * Replaces what the gateway `gateway` last wrote of its requests in flight per job by `inFlight` (a job left out
   * has none), timestamped now (the store's clock), even when there are none: a drain elsewhere learns that this
   * gateway is there and sends nothing more to the job. null takes the gateway out (it stops).
   */
  writeJobsInFlight(gateway: string, inFlight: Readonly<Record<string, number>> | null, now: number): Promise<void>
  /** What every gateway but `except` wrote of its requests in flight per job within `freshMs` of now (store's clock). */
  readJobsInFlight(freshMs: number, except: string, now: number): Promise<GatewayJobs[]>
  /** The vault key's check value the database holds, or undefined before the first manager stored one. */
  keyCheck(): Promise<string | undefined>
  /** Stores `check` unless one is stored already; answers the one stored (the first starter's wins). */
  keepKeyCheck(check: string): Promise<string>
  /** The figures of `/metrics`, with at most `maxVaults` vault addresses. */
  metricCounts(maxVaults: number): Promise<MetricCounts>
  close(): Promise<void>
}
