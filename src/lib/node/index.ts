export {
  checkHttp,
  checkTcp,
  checkWebsocket,
  type CheckOutcome,
  DEFAULT_READY_TIMEOUT_MS,
  type Readiness,
  type ReadinessTarget,
  waitUntilReady,
} from './health.js'
export {
  commandArgv,
  type CommandSpec,
  type OperationPlan,
  planOperations,
  type PlannedPort,
  shellArgv,
  substituteSecrets,
} from './operation-plan.js'
export {MAX_LOG_BYTES, MAX_LOG_LINES} from '../results/flow-state.js'
export {HOST_PROCESS_NOTICE, HostProcessRuntime} from './runtime/host-process.js'
export {
  containerName,
  defaultPodmanDataDir,
  detectRuntime,
  NO_GPU_NOTICE,
  type PodmanOptions,
  PodmanRuntime,
  type PullPolicy,
  type RuntimeDetection,
  writePodmanConfig,
} from './runtime/podman.js'
export type {OperationResult, RuntimeKind} from '../results/operation-result.js'
export type {ContainerRuntime, PublishedPort, RunningOperation, RunOptions} from './runtime/runtime.js'
