import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {ExitCode, GpunetError} from '../../errors.js'
import {commandArgv, type OperationPlan} from '../operation-plan.js'
import {operationResult, spawnCollected} from './process.js'
import type {ContainerRuntime, OperationResult, RunningOperation, RunOptions} from './runtime.js'

/** The notice every result of the host-process runtime carries. */
export const HOST_PROCESS_NOTICE =
  'This operation ran directly on the node host, without a container: no isolation, and its image was not used.'

/** The notice of a host-process operation with resources: their targets are not where its files are. */
export const HOST_RESOURCES_NOTICE =
  'Resources were not placed at their targets on the host: GPUNET_RESOURCES maps each target to its folder (JSON).'

/**
 * Runs an operation's command as a plain process on the node's host, for machines without a container
 * runtime. It exists only as an opt-in (`allowHostProcesses: true`): it isolates nothing. The command runs in
 * a fresh temporary folder with the operation's env over a minimal one (never the node's own environment),
 * and exposed ports are the ports the process itself listens on.
 */
export class HostProcessRuntime implements ContainerRuntime {
  readonly kind = 'host-process'

  constructor(options: {allowHostProcesses: boolean}) {
    if (!options.allowHostProcesses) {
      throw new GpunetError('host_process_not_allowed', 'Running jobs as host processes is turned off.', {
        hint: 'Turn it on only on a machine whose jobs you trust: they run without any isolation.',
        exitCode: ExitCode.DENIED,
      })
    }
  }

  /** Starts the operation's command on the host. */
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
    const dir = await mkdtemp(join(tmpdir(), 'gpunet-host-'))
    // A host process cannot see a folder at another path: it finds its resources' folders in this variable.
    const resources = options.mounts?.length
      ? {GPUNET_RESOURCES: JSON.stringify(Object.fromEntries(options.mounts.map((m) => [m.target, m.source])))}
      : {}
    const env = {PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...plan.env, ...resources}
    // Its own process group, so stop() ends what a shell command started too.
    const run = spawnCollected(command, args, {
      env,
      cwd: dir,
      detached: true,
      outputLimit: options.outputLimit,
      redact: options.redact,
    })
    let stopped = false
    const result = run.outcome.then(async (o) => {
      await rm(dir, {recursive: true, force: true})
      return operationResult(plan.id, 'host-process', o, {
        stopped,
        isolated: false,
        notices: [
          HOST_PROCESS_NOTICE,
          ...ignoredSettings(plan),
          ...(options.mounts?.length ? [HOST_RESOURCES_NOTICE] : []),
        ],
      })
    })
    const stop = async (graceSeconds = 10) => {
      stopped = true
      signalGroup(run.child.pid, 'SIGTERM')
      const timer = setTimeout(() => signalGroup(run.child.pid, 'SIGKILL'), graceSeconds * 1000)
      try {
        return await result
      } finally {
        clearTimeout(timer)
      }
    }
    const ports = plan.expose.map((p) => ({...p, host: '127.0.0.1' as const, hostPort: p.port}))
    return {name: `host-${options.jobId}-${plan.id}`, ports, argv, pid: run.child.pid, result, stop}
  }

  /** Runs the operation's command on the host to its end. */
  async run(plan: OperationPlan, options: RunOptions): Promise<OperationResult> {
    return (await this.start(plan, options)).result
  }
}

function ignoredSettings(plan: OperationPlan): string[] {
  const ignored = [plan.workDir !== undefined && 'work_dir', plan.gpu && 'gpu'].filter((s) => typeof s === 'string')
  return ignored.length > 0 ? [`Not applied on the host: ${ignored.join(', ')}.`] : []
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  try {
    if (pid !== undefined) process.kill(-pid, signal)
  } catch {
    // The group has already ended.
  }
}
