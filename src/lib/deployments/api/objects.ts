/** The rows as the network's API shows them: member names in snake_case exactly as @nosana/api's schema, times ISO. */
import type {DeploymentEndpoint} from '../manager/endpoints.js'
import {queuePlacementOf} from '../manager/move.js'
import {policyOf} from '../autoscale/policy.js'
import {TOKEN_DECIMALS} from '../../market/networks.js'
import {INFINITE} from '../strategies/index.js'
import type {DeploymentRow, EventRow, JobRow, RevisionRow, TaskRow, VaultRow} from '../types.js'

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * The deployment object (components.schemas.Deployment), plus gpunet's `time_scale`, and its `autoscale` policy and
 * `budget` (tokens) when it has them.
 */
export function deploymentObject(d: DeploymentRow, activeJobs: number, endpoints: DeploymentEndpoint[] = []) {
  const policy = policyOf(d)
  return {
    id: d.id,
    name: d.name,
    vault: d.vault,
    market: d.market,
    owner: d.owner,
    status: d.status,
    replicas: d.replicas,
    timeout: d.timeout,
    endpoints,
    confidential: d.confidential,
    active_revision: d.active_revision,
    active_jobs: activeJobs,
    strategy: d.strategy,
    ...(d.schedule ? {schedule: d.schedule} : {}),
    ...(d.strategy === 'INFINITE'
      ? {rotation_time: d.rotation_time ?? INFINITE.defaultRotationS, startup_timeout: d.startup_timeout ?? null}
      : {}),
    time_scale: d.time_scale,
    // gpunet's: the market a move under way leaves, and the queue timeout that moves the deployment (seconds).
    ...(d.move_from ? {move_from: d.move_from} : {}),
    ...(d.queue_placement ? {queue_timeout: queuePlacementOf(d)!.timeout_s} : {}),
    ...(policy ? {autoscale: policy} : {}),
    ...(d.budget === null || d.budget === undefined ? {} : {budget: d.budget / 10 ** TOKEN_DECIMALS}),
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
  }
}

/** A job row (components.schemas.Job). */
export function jobObject(j: JobRow) {
  return {
    tx: j.tx,
    job: j.job,
    deployment: j.deployment,
    market: j.market,
    revision: j.revision,
    state: j.state,
    time_start: j.time_start,
    created_at: iso(j.created_at),
    updated_at: iso(j.updated_at),
  }
}

/**
 * One job as `/:id/jobs/:job` answers it: the row, plus the network's detail members from the chain (node, times in
 * unix seconds) and the revision's definition. `jobStatus` and `jobResult` are null: this manager does not fetch a
 * job's results (`gpunet job get JOB` does).
 */
export function jobDetailObject(
  j: JobRow,
  d: DeploymentRow,
  definition: unknown,
  chain: {node: string | null; timeStart: number; timeEnd: number} | null,
) {
  return {
    ...jobObject(j),
    confidential: d.confidential,
    node: chain?.node ?? null,
    jobStatus: null,
    jobDefinition: definition,
    jobResult: null,
    timeStart: chain?.timeStart ?? j.time_start,
    timeEnd: chain?.timeEnd ?? 0,
    listedAt: Math.floor(j.created_at / 1000),
  }
}

/** A task (components.schemas.Task), plus gpunet's id, status, attempts and last error. */
export function taskObject(t: TaskRow) {
  return {
    id: t.id,
    task: t.task,
    deploymentId: t.deployment,
    ...(t.tx ? {tx: t.tx} : {}),
    ...(t.job ? {job: t.job} : {}),
    ...(t.limit !== null ? {limit: t.limit} : {}),
    active_revision: t.revision,
    status: t.status,
    attempts: t.attempts,
    ...(t.error ? {error: t.error} : {}),
    due_at: iso(t.due_at),
    created_at: iso(t.created_at),
  }
}

/** An event (components.schemas.Event). */
export function eventObject(e: EventRow) {
  return {
    category: e.category,
    deploymentId: e.deployment,
    type: e.type,
    message: e.message,
    ...(e.tx ? {tx: e.tx} : {}),
    created_at: iso(e.created_at),
  }
}

/** A revision (components.schemas.Revision). */
export function revisionObject(r: RevisionRow) {
  return {
    revision: r.revision,
    deployment: r.deployment,
    ipfs_definition_hash: r.ipfs_definition_hash,
    job_definition: JSON.parse(r.job_definition) as unknown,
    created_at: iso(r.created_at),
  }
}

/** A vault (components.schemas.Vault). */
export function vaultObject(v: VaultRow) {
  return {vault: v.vault, owner: v.owner, created_at: iso(v.created_at)}
}
