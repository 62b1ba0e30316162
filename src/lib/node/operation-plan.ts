import type {NodeMembers, OpMembers, RestartRule, ResultRule} from '../definition/network-form/node-members.js'
import {isObject} from '../definition/paths.js'
import type {ExposedPort, HealthCheck, JobDefinition, Operation, OperationArgs, Resource} from '../definition/schema.js'
import {findSecretReferences, SECRET_REFERENCE} from '../definition/secret-refs.js'
import {ExitCode, GpunetError} from '../errors.js'

/**
 * What a runtime executes for an operation's `cmd`: a `shell` script (a string `cmd`, which the spec gives to
 * bash) or an `exec` word list passed as given, where an empty list means the image's own default command.
 */
export type CommandSpec = {kind: 'shell'; script: string} | {kind: 'exec'; argv: string[]}

/** An exposed port of an operation, with the defaults filled in. */
export interface PlannedPort {
  port: number
  type: NonNullable<ExposedPort['type']>
  health_checks: HealthCheck[]
  /** Which of `health_checks` are re-run while the job runs (the network's `continuous`); none by default. */
  continuous?: boolean[]
}

/** How the node schedules an operation: its group, what it waits for, and when it runs again. */
export interface ExecutionPlan {
  group: string
  dependsOn: string[]
  stopIfDependentStops: boolean
  restart: RestartRule
  results?: Record<string, ResultRule>
  /** Named volumes of the job mounted read-write at `dest`. */
  volumes: {name: string; dest: string}[]
}

/** A `container/create-volume` operation: it makes a volume the job's operations mount by name. */
export interface VolumePlan {
  id: string
  type: 'container/create-volume'
  volume: string
  execution: ExecutionPlan
}

/** One step of a job as the node runs it: an operation to start, or a volume to make. */
export type StepPlan = (OperationPlan & {execution: ExecutionPlan}) | VolumePlan

/** One operation with the job's `global` defaults applied: everything a runtime needs to start it. */
export interface OperationPlan {
  id: string
  type: Operation['type']
  image: string
  command: CommandSpec
  /** Replaces the image's entrypoint when set; an empty list clears it. */
  entrypoint?: string[]
  env: Record<string, string>
  workDir?: string
  gpu: boolean
  expose: PlannedPort[]
  /** Kept for the caller, which loads them before it starts the operation. */
  resources: Resource[]
  /** Registry credentials: the podman runtime hands `docker` to its pulls in an auth file. */
  authentication?: OperationArgs['authentication']
  output?: string
  requiredVram?: number
}

/** The type an exposed port gets when the definition names none. */
const DEFAULT_PORT_TYPE = 'web'

/**
 * The operations of a definition in order, each with `global` applied as the network's nodes apply it: `env`
 * merged under its own; `entrypoint` and `work_dir` where its own is unset or empty; a GPU when either asks.
 */
export function planOperations(definition: JobDefinition): OperationPlan[] {
  const global = definition.global ?? {}
  return definition.ops.map(({id, type, args}) => ({
    id,
    type,
    image: args.image,
    command: commandSpec(args.cmd),
    // The node takes the global value when the operation's own is falsy: an empty string is unset, `[]` is not.
    ...optional('entrypoint', toWords(args.entrypoint || global.entrypoint)),
    env: {...global.env, ...args.env},
    ...optional('workDir', args.work_dir || global.work_dir),
    gpu: Boolean(args.gpu || global.gpu),
    expose: exposedPorts(args.expose),
    resources: args.resources ?? [],
    ...optional('authentication', args.authentication),
    ...optional('output', args.output),
    ...optional('requiredVram', args.required_vram),
  }))
}

/** Every step of a job in the definition's order: its operations (as planOperations) and volumes, each scheduled. */
export function planSteps(definition: JobDefinition, members: NodeMembers | null): StepPlan[] {
  const plans = new Map(planOperations(definition).map((plan) => [plan.id, plan]))
  if (!members) return [...plans.values()].map((plan) => ({...plan, execution: executionOf(null, plan.id)}))
  return members.ops.map((op): StepPlan => {
    const execution = executionOf(op, op.id)
    if (op.createsVolume !== undefined)
      return {id: op.id, type: 'container/create-volume', volume: op.createsVolume, execution}
    const plan = plans.get(op.id)!
    const expose = plan.expose.map((port) => ({...port, continuous: op.continuous.get(port.port) ?? []}))
    return {...plan, expose, execution}
  })
}

function executionOf(op: OpMembers | null, id: string): ExecutionPlan {
  if (!op) return {group: id, dependsOn: [], stopIfDependentStops: false, restart: {policy: 'no'}, volumes: []}
  return {
    group: op.group,
    dependsOn: op.dependsOn,
    stopIfDependentStops: op.stopIfDependentStops,
    restart: op.restart,
    ...optional('results', op.results),
    volumes: op.volumes,
  }
}

/** Whether any operation needs a GPU (its own `gpu` or the `global` one): a node without one never takes it. */
export function needsGpu(definition: JobDefinition): boolean {
  return planOperations(definition).some((op) => op.gpu)
}

/** A string is a bash script; an array (empty included) is a word list; no `cmd` is the image's default. */
function commandSpec(cmd: OperationArgs['cmd']): CommandSpec {
  return typeof cmd === 'string' ? {kind: 'shell', script: cmd} : {kind: 'exec', argv: cmd ?? []}
}

/**
 * Runs `script` with bash when the image (or host) has bash on its PATH, and with `/bin/sh` otherwise.
 * The spec gives string commands to bash, but small images (busybox, alpine) have none; the choice is made by
 * `/bin/sh` where the command runs, since only there is it known what exists. `exec` keeps one process.
 */
export function shellArgv(script: string): string[] {
  return [
    '/bin/sh',
    '-c',
    'if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; fi; exec /bin/sh -c "$1"',
    'gpunet-cmd',
    script,
  ]
}

/** The argv a command spec runs as (an empty list for the image's default command). */
export function commandArgv(command: CommandSpec): string[] {
  return command.kind === 'shell' ? shellArgv(command.script) : command.argv
}

function toWords(value: string | string[] | undefined): string[] | undefined {
  // A string entrypoint is one executable, as in an image's exec-form ENTRYPOINT: it is never split.
  return typeof value === 'string' ? [value] : value
}

function exposedPorts(expose: OperationArgs['expose']): PlannedPort[] {
  if (expose === undefined) return []
  const ports: ExposedPort[] = typeof expose === 'number' ? [{port: expose}] : expose
  return ports.map((p) => ({port: p.port, type: p.type ?? DEFAULT_PORT_TYPE, health_checks: p.health_checks ?? []}))
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({[key]: value} as Record<K, V>)
}

/**
 * A copy of `value` with every `%%secrets.NAME%%` in every string replaced by the secret's value. Throws a
 * `GpunetError` naming (never showing) the secrets that are missing, before anything is replaced.
 */
export function substituteSecrets<T>(value: T, secrets: Readonly<Record<string, string>>): T {
  const missing = findSecretReferences(value).filter((name) => !Object.hasOwn(secrets, name))
  if (missing.length > 0) {
    throw new GpunetError(
      'secret_missing',
      `The job refers to ${missing.length === 1 ? 'a secret' : 'secrets'} its poster does not have: ${missing.join(', ')}.`,
      {
        hint: 'The poster stores each of them, under that name, in the secrets service before the job runs.',
        exitCode: ExitCode.NOT_FOUND,
      },
    )
  }
  return replaceDeep(value, (text) => text.replace(SECRET_REFERENCE, (_, name: string) => secrets[name] as string))
}

function replaceDeep<T>(value: T, replace: (text: string) => string): T {
  if (typeof value === 'string') return replace(value) as T
  if (Array.isArray(value)) return value.map((item: unknown) => replaceDeep(item, replace)) as T
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, item]) => [k, replaceDeep(item, replace)])) as T
  }
  return value
}
