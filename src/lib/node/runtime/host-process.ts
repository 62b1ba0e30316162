import {spawnSync} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {mkdtemp, rm} from 'node:fs/promises'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {ExitCode, GpunetError} from '../../errors.js'
import {commandArgv, type OperationPlan} from '../operation-plan.js'
import {signalProcessesWhere} from '../../process/signal-where.js'
import {checkEnvNames, ownerTag} from './podman.js'
import {type ExecOptions, type ExecProcess, hostExec} from './exec.js'
import {operationResult, spawnCollected} from './process.js'
import {hostSample, type ResourceSample} from './stats.js'
import type {OperationResult} from '../../results/operation-result.js'
import type {ContainerRuntime, RunningOperation, RunOptions} from './runtime.js'

/** The notice every result of the host-process runtime carries. */
export const HOST_PROCESS_NOTICE =
  'This operation ran directly on the node host, without a container: no isolation, and its image was not used.'

/** The notice of a host-process operation with resources: their targets are not where its files are. */
export const HOST_RESOURCES_NOTICE =
  'Resources were not placed at their targets on the host: GPUNET_RESOURCES maps each target to its folder (JSON).'

/** The notice of a host-process operation with named volumes: they are not at their `dest` either. */
export const HOST_VOLUMES_NOTICE =
  'Volumes were not placed at their destinations on the host: GPUNET_VOLUMES maps each destination to its folder (JSON).'

/**
 * Runs an operation's command as a plain process on the node's host, for machines without a container
 * runtime. It exists only as an opt-in (`allowHostProcesses: true`): it isolates nothing. The command runs in
 * a fresh temporary folder with the operation's env over a minimal one (never the node's own environment),
 * and exposed ports are the ports the process itself listens on.
 */
export class HostProcessRuntime implements ContainerRuntime {
  readonly kind = 'host-process'
  /** Starts every marker of this runtime's operations: a digest of its owner, so `reclaim` finds them. */
  private readonly ownerTag: string

  /**
   * `owner`: whose operations these are (a localnet's data directory), so that `reclaim` ends the processes a killed
   * node left, and never another localnet's.
   */
  constructor(options: {allowHostProcesses: boolean; owner?: string}) {
    this.ownerTag = ownerTag(options.owner ?? randomUUID())
    if (!options.allowHostProcesses) {
      throw new GpunetError('host_process_not_allowed', 'Running jobs as host processes is turned off.', {
        hint: 'Turn it on only on a machine whose jobs you trust: they run without any isolation.',
        exitCode: ExitCode.DENIED,
      })
    }
  }

  /**
   * Kills the processes of this owner's operations that are there before its node runs any: a node killed with
   * SIGKILL leaves them running, and nothing else would end them. Says how many it killed.
   */
  async reclaim(): Promise<string[]> {
    const killed = signalMarked(`${this.ownerTag}.`, 'SIGKILL', false)
    return killed > 0 ? [`${killed} host process${killed === 1 ? '' : 'es'}`] : []
  }

  /** Starts the operation's command on the host; a command that cannot start gives a failed result, not an error. */
  async start(plan: OperationPlan, options: RunOptions): Promise<RunningOperation> {
    const argv = [...(plan.entrypoint ?? []), ...commandArgv(plan.command)]
    const [command, ...args] = argv
    if (plan.type !== 'container/run' || command === undefined) {
      throw new GpunetError(
        'operation_unsupported',
        `Operation ${plan.id} cannot run as a host process: it has no command of its own (only its image has one).`,
        {exitCode: ExitCode.INVALID_INPUT},
      )
    }
    const name = `host-${options.jobId}-${plan.id}`
    const notices = [
      HOST_PROCESS_NOTICE,
      ...ignoredSettings(plan),
      ...(options.mounts?.length ? [HOST_RESOURCES_NOTICE] : []),
      ...(options.volumes?.length ? [HOST_VOLUMES_NOTICE] : []),
    ]
    const refused = (reason: string) => notStarted(plan.id, name, argv, notices, reason)
    try {
      checkEnvNames(plan.env)
    } catch (error) {
      return refused((error as Error).message)
    }
    const nul = Object.keys(plan.env).find((key) => plan.env[key]!.includes('\0'))
    if (nul) return refused(`The value of environment variable ${nul} holds a NUL byte, which no process can receive.`)
    // A host process listens where its command says: the gateway must never serve another program's port.
    for (const {port} of plan.expose) {
      if (!(await portFree(port))) {
        return refused(
          `Port ${port} is already in use on the node host: a host process cannot be given another port, and the ` +
            'gateway does not serve what another program listens on.',
        )
      }
    }
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-host-'))
    // A host process cannot see a folder at another path: it finds its resources' folders in this variable.
    const resources = options.mounts?.length
      ? {GPUNET_RESOURCES: JSON.stringify(Object.fromEntries(options.mounts.map((m) => [m.target, m.source])))}
      : {}
    const volumes = options.volumes?.length
      ? {GPUNET_VOLUMES: JSON.stringify(Object.fromEntries(options.volumes.map((v) => [v.target, v.source])))}
      : {}
    // Every process the operation starts inherits this marker, even one that leaves the process group (setsid):
    // the node finds them by it in /proc and ends them with the operation.
    const marker = `${this.ownerTag}.${randomUUID()}`
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      ...plan.env,
      ...resources,
      ...volumes,
      [MARKER]: marker,
    }
    // In a PID namespace of its own where the host allows one: when the command ends, the kernel ends every
    // process it started, even one that left the session and dropped the marker (`env -u ... setsid`).
    const contained = pidNamespaceAvailable()
    if (!contained) notices.push(UNCONTAINED_NOTICE)
    const [program, ...programArgs] = contained ? [...PID_NAMESPACE, command, ...args] : [command, ...args]
    let run: ReturnType<typeof spawnCollected>
    try {
      // Its own process group, so stop() ends what a shell command started too.
      run = spawnCollected(program as string, programArgs, {
        env,
        cwd: dir,
        detached: true,
        logLimits: options.logLimits,
        redact: options.redact,
        onLine: options.onLine,
      })
    } catch (error) {
      await rm(dir, {recursive: true, force: true})
      return refused(
        `${command} could not be started: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      )
    }
    const endAll = (signal: NodeJS.Signals) => {
      signalGroup(run.child.pid, signal)
      signalMarked(marker, signal)
    }
    // What the command left behind (daemons, setsid children) ends with it, and frees its output pipes.
    run.child.once('exit', () => endAll('SIGKILL'))
    let stopped = false
    const result = run.outcome.then(async (o) => {
      endAll('SIGKILL')
      await rm(dir, {recursive: true, force: true})
      return operationResult(plan.id, 'host-process', o, {stopped, isolated: false, notices})
    })
    const stop = async (graceSeconds = 10) => {
      stopped = true
      endAll('SIGTERM')
      const timer = setTimeout(() => endAll('SIGKILL'), graceSeconds * 1000)
      try {
        return await result
      } finally {
        clearTimeout(timer)
      }
    }
    const ports = plan.expose.map((p) => ({...p, host: '127.0.0.1' as const, hostPort: p.port}))
    return {name, ports, argv, pid: run.child.pid, result, stop}
  }

  /** Runs the operation's command on the host to its end. */
  async run(plan: OperationPlan, options: RunOptions): Promise<OperationResult> {
    return (await this.start(plan, options)).result
  }

  /** Runs a command beside the operation's processes: its folder, its environment (and so its marker). */
  exec(op: RunningOperation, cmd: readonly string[], options: ExecOptions): ExecProcess {
    return hostExec(op.pid, cmd, options)
  }

  /** The summed counters of the operation's processes, from /proc. */
  async sample(op: RunningOperation): Promise<ResourceSample | null> {
    return hostSample(op.pid)
  }
}

function ignoredSettings(plan: OperationPlan): string[] {
  const ignored = [plan.workDir !== undefined && 'work_dir', plan.gpu && 'gpu'].filter((s) => typeof s === 'string')
  return ignored.length > 0 ? [`Not applied on the host: ${ignored.join(', ')}.`] : []
}

/** The notice of a host-process operation run where no PID namespace could hold it. */
export const UNCONTAINED_NOTICE =
  'No PID namespace was available: processes that left the session and dropped GPUNET_OPERATION may outlive the operation.'

/** util-linux unshare: an unprivileged user and PID namespace whose processes all end when the command does. */
// The namespace's first process is a shell that only waits: the kernel delivers no SIGTERM to a namespace's
// init, so the command runs beside it, where the process group's signals reach it as before.
const PID_NAMESPACE = [
  'unshare',
  '--user',
  '--map-current-user',
  '--pid',
  '--fork',
  '--kill-child',
  '--',
  '/bin/sh',
  '-c',
  '"$@" & wait $!',
  'gpunet-operation',
]

let pidNamespace: boolean | undefined

/** True when this host lets an unprivileged process make a PID namespace (probed once). */
function pidNamespaceAvailable(): boolean {
  pidNamespace ??=
    spawnSync(PID_NAMESPACE[0] as string, [...PID_NAMESPACE.slice(1), 'true'], {stdio: 'ignore'}).status === 0
  return pidNamespace
}

/** The env variable that marks every process of one host-process operation. */
const MARKER = 'GPUNET_OPERATION'

/** An operation whose command never started: its result says why, with the host-process notices. */
function notStarted(id: string, name: string, argv: string[], notices: string[], reason: string): RunningOperation {
  const now = new Date().toISOString()
  const log = {logs: [{type: 'stderr' as const, log: `${reason}\n`, timestamp: now}], droppedLines: 0, droppedBytes: 0}
  const result = Promise.resolve(
    operationResult(
      id,
      'host-process',
      {exitCode: 127, startedAt: now, endedAt: now, log},
      {stopped: false, isolated: false, notices},
    ),
  )
  return {name, ports: [], argv, pid: undefined, result, stop: () => result}
}

/** True when nothing listens on 127.0.0.1:`port` (nor on every address). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/**
 * Signals every process whose environment holds the operation's marker (same user: /proc/PID/environ), or with
 * `whole` false every marker that starts with `marker`; returns how many it signalled. Without /proc (not Linux) the
 * process group is all there is.
 */
function signalMarked(marker: string, signal: NodeJS.Signals, whole = true): number {
  const needle = Buffer.from(`${MARKER}=${marker}${whole ? '\0' : ''}`)
  return signalProcessesWhere('environ', (environ) => environ.includes(needle), signal)
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  try {
    if (pid !== undefined) process.kill(-pid, signal)
  } catch {
    // The group has already ended.
  }
}
