import type {OperationResult, RuntimeKind} from '../../results/operation-result.js'
import type {LineListener, LogLimits} from '../output.js'
import type {OperationPlan, PlannedPort} from '../operation-plan.js'
import type {ResourceMount} from '../resources.js'
import type {ExecOptions, ExecProcess} from './exec.js'
import type {ResourceSample} from './stats.js'

/** How a caller asks for an operation to run. */
export interface RunOptions {
  /** The job's address (or any id unique per job); names the container with the operation's id. */
  jobId: string
  /** Lines and bytes of output kept (the oldest dropped beyond them); the network's caps by default. */
  logLimits?: LogLimits
  /** Secret values (by name) to mask in stdout and stderr, e.g. the ones substituted into the plan. */
  redact?: Readonly<Record<string, string>>
  /** Host ports to publish exposed container ports on (container port → host port); free ones otherwise. */
  hostPorts?: Readonly<Record<number, number>>
  /** Downloaded resources: host folders the container sees read-only at their targets. */
  mounts?: readonly ResourceMount[]
  /** The job's named volumes the operation mounts: host folders the container reads and writes at their targets. */
  volumes?: readonly ResourceMount[]
  /** Told of each line of output as it comes, masked: the node API streams them. */
  onLine?: LineListener
  /** Aborted when the job ends or times out: a wait before the operation starts (a localnet's simulated pull) ends. */
  signal?: AbortSignal
}

/** An exposed port of a running operation, reachable on 127.0.0.1 at `hostPort`. */
export interface PublishedPort extends PlannedPort {
  host: '127.0.0.1'
  hostPort: number
}

/** An operation that has started: its published ports, a way to stop it, and its result when it ends. */
export interface RunningOperation {
  readonly name: string
  readonly ports: PublishedPort[]
  /** The arguments the runtime's process was started with (never holding a secret value). */
  readonly argv: readonly string[]
  readonly pid: number | undefined
  readonly result: Promise<OperationResult>
  /** Ends the operation, waiting up to `graceSeconds` before killing it, and resolves once it has ended. */
  stop(graceSeconds?: number): Promise<OperationResult>
}

/** Runs the operations of a job: in containers (podman) or, when the user opts in, as host processes. */
export interface ContainerRuntime {
  readonly kind: RuntimeKind
  /** Starts an operation and resolves once it is running (or has already failed to start). */
  start(plan: OperationPlan, options: RunOptions): Promise<RunningOperation>
  /** Starts an operation and resolves with its result when it ends. */
  run(plan: OperationPlan, options: RunOptions): Promise<OperationResult>
  /** Runs a command inside a running operation (the node API's `/exec`). */
  exec(op: RunningOperation, cmd: readonly string[], options: ExecOptions): ExecProcess
  /** The operation's resource counters now; null when they cannot be read (it ended). */
  sample(op: RunningOperation): Promise<ResourceSample | null>
  /** Ends what the runtime itself keeps running (podman's API service), once its node stops. */
  close?(): Promise<void>
  /** Before its node runs anything: ends what a killed node of the same owner left running; what, in words. */
  reclaim?(): Promise<string[]>
}
