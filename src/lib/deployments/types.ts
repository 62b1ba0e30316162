/** The rows the deployment manager keeps, and the states and strategies of the network's deployments. */

/** A deployment's states, exactly as the network's API names them. */
export const DEPLOYMENT_STATUSES = [
  'DRAFT',
  'STARTING',
  'RUNNING',
  'STOPPING',
  'STOPPED',
  'INSUFFICIENT_FUNDS',
  'ERROR',
  'ARCHIVED',
] as const
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number]

/** The strategies this manager runs, as the network names them. */
export const STRATEGIES = ['SIMPLE', 'SIMPLE-EXTEND', 'SCHEDULED', 'INFINITE'] as const
export type Strategy = (typeof STRATEGIES)[number]

/**
 * What a deployment endpoint's URL is (its `kind`): the network's load-balanced URL of the deployment, gpunet's
 * stable URL, or one replica's own; in the order a deployment's endpoints list them (docs/deployment-manager.md).
 */
export const ENDPOINT_KINDS = ['deployment', 'stable', 'replica'] as const
export type EndpointKind = (typeof ENDPOINT_KINDS)[number]

/** The states the worker acts on: it lists, extends and stops only for these. */
export const ACTIVE_STATUSES: readonly DeploymentStatus[] = ['STARTING', 'RUNNING', 'STOPPING', 'INSUFFICIENT_FUNDS']

export interface DeploymentRow {
  id: string
  name: string
  owner: string
  vault: string
  market: string
  status: DeploymentStatus
  replicas: number
  /** Minutes, as the network's API counts them. */
  timeout: number
  strategy: Strategy
  /** Localnet only: every duration of the strategy is divided by it (1 elsewhere). */
  time_scale: number
  confidential: boolean
  active_revision: number
  /** When the last start was asked (ms); jobs listed since belong to this run. */
  started_at: number | null
  /** SCHEDULED: the 5-field cron its listings follow. */
  schedule?: string | null
  /** INFINITE: seconds before a job's end its replacement is listed. */
  rotation_time?: number | null
  /** INFINITE: minutes a running job has to come online before it is stopped and replaced; none when null. */
  startup_timeout?: number | null
  /** INFINITE: rapid-completion rounds throttled in a row (the fail-safe stops the deployment after 8). */
  throttle_rounds?: number
  /**
   * A move under way (manager/move.ts): the market its replicas leave (`market` is the one they move to); null when
   * none is. Kept with `move_began` so that a restarted manager finishes the move or rolls it back.
   */
  move_from?: string | null
  /** When the move under way began (ms). */
  move_began?: number | null
  /**
   * gpunet's queue timeout (JSON of QueuePlacement): a replica QUEUED longer than it moves the deployment to the next
   * market that fits its need; null when the deployment stays where it is.
   */
  queue_placement?: string | null
  /**
   * Autoscaling (autoscale/policy.ts): the fewest and most replicas, the in-flight requests a replica takes, and the
   * seconds (before scaling) the load must fit in one replica less before one is scaled away; all null without a
   * policy.
   */
  min_replicas?: number | null
  max_replicas?: number | null
  target_concurrency?: number | null
  scale_down_after?: number | null
  /** Since when (ms) the load fits in one replica less: the scale-down window runs from it; null while it does not. */
  calm_since?: number | null
  /** The most token base units the deployment may spend (paying/budget.ts); null: no cap. */
  budget?: number | null
  created_at: number
  updated_at: number
}

export interface RevisionRow {
  deployment: string
  revision: number
  /** The CIDv0 of the definition as uploaded. */
  ipfs_definition_hash: string
  /** The definition as the owner gave it (JSON text). */
  job_definition: string
  created_at: number
}

/** A job's state as the chain shows it (RUNNING: queued with a run). */
export type JobState = 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'STOPPED'

/** A job's deployment proxies as the tunnel watch last saw them: serving, or stopped serving for a reason. */
export type JobTunnel = 'up' | 'lost' | 'graceful'

export interface JobRow {
  job: string
  deployment: string
  /** The signature of the `list` that created it. */
  tx: string
  market: string
  revision: number
  /** The run account the `list` named: read first when the job's run is looked up. */
  run: string
  state: JobState
  /** Unix seconds when a node started it; 0 while queued. */
  time_start: number
  /** The job's timeout on chain in seconds, as last read. */
  chain_timeout: number
  /**
   * The job's own price on chain (token base units a second, a u64 as decimal text), as last read: the program took
   * its deposit at it, whatever the market charges since. Null (or absent) in a row stored before it was recorded.
   */
  chain_price?: string | null
  /** Unix seconds it ended, as the chain recorded it; 0 while it runs or when its account was closed. */
  time_end?: number
  /** True once the manager asked to stop it: a job that ends otherwise ended on its own. */
  stop_requested: boolean
  /**
   * The last state of its deployment proxies (manager/tunnel-watch.ts): `up` once one served, `lost` or `graceful`
   * once one stopped serving; null (or absent) while none ever served (a service that never came up).
   */
  tunnel?: JobTunnel | null
  /**
   * When a drain first marked it draining (unix ms, the store's clock; draining.ts), so that every gateway on the
   * store sends it no new request; null (or absent) while it was never drained. Kept once the job ended.
   */
  draining_at?: number | null
  created_at: number
  updated_at: number
}

export type TaskKind = 'LIST' | 'EXTEND' | 'STOP'
export type TaskStatus = 'PENDING' | 'PROCESSING' | 'DONE' | 'FAILED'

export interface TaskRow {
  id: number
  deployment: string
  task: TaskKind
  status: TaskStatus
  /** EXTEND and STOP: the job. */
  job: string | null
  /**
   * LIST: how many jobs are still to list. EXTEND: the seconds of a one-shot extension (the extend rule,
   * strategies/extend-rule.ts); null for one of the deployment's full timeout.
   */
  limit: number | null
  revision: number
  attempts: number
  due_at: number
  /** The transaction in flight, saved before it is sent (see paying.ts); null when none is. */
  in_flight: InFlight | null
  /** The last transaction sent for it, once confirmed. */
  tx: string | null
  error: string | null
  created_at: number
  updated_at: number
}

/** A signed transaction saved before sending: what a restarted manager checks on the chain before anything else. */
export interface InFlight {
  /** The signed wire bytes, base64: resent as they are while their blockhash is valid. */
  raw: string
  signature: string
  lastValidBlockHeight: number
  /** LIST: the new job's address and its run account. */
  job?: string
  run?: string
  /** LIST: the new job's keypair, sealed as the vaults' are. */
  jobKey?: string
  /** EXTEND: the job's timeout before, and the one asked for (seconds). */
  timeoutBefore?: number
  timeoutAfter?: number
}

export interface EventRow {
  deployment: string
  category: 'Deployment' | 'Event'
  type: string
  message: string
  tx: string | null
  created_at: number
}

export interface VaultRow {
  vault: string
  owner: string
  /** The vault's 64-byte secret key, sealed (vault-seal.ts). */
  sealed: Buffer
  created_at: number
}
