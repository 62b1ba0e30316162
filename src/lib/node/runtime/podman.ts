import {execFile} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync} from 'node:fs'
import {mkdir, mkdtemp, rm, writeFile} from 'node:fs/promises'
import {homedir, tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {promisify} from 'node:util'

import {ExitCode, GpunetError} from '../../errors.js'
import type {LogEntry} from '../../results/flow-state.js'
import {commandArgv, type OperationPlan} from '../operation-plan.js'
import {type ExecOptions, type ExecProcess, markedSession} from './exec.js'
import {PodmanApi, stopLeftServices} from './podman-api.js'
import {type ChildRun, freePort, operationResult, spawnCollected} from './process.js'
import {podmanSample, type ResourceSample} from './stats.js'
import type {ResourceMount} from '../resources.js'
import type {OperationResult} from '../../results/operation-result.js'
import type {ContainerRuntime, PublishedPort, RunningOperation, RunOptions} from './runtime.js'

/** When podman may pull an operation's image: `never` where no registry can be reached. */
export type PullPolicy = 'always' | 'missing' | 'never'

/** Settings of a `PodmanRuntime`. */
export interface PodmanOptions {
  /** Where gpunet writes its `containers.conf` and `registries.conf`. */
  dataDir?: string
  pull?: PullPolicy
  /** The podman executable. */
  podman?: string
  /** Whether NVIDIA GPUs can be given to containers; found from the CDI specs on the machine otherwise. */
  gpuAvailable?: boolean
  /**
   * Whose containers these are (a localnet's data directory): each is labelled `gpunet.localnet=<owner>`, so that
   * `reclaim` stops the ones a killed node left running, and never another localnet's.
   */
  owner?: string
}

/** The label naming the localnet whose node runs a container (PodmanOptions.owner). */
export const OWNER_LABEL = 'gpunet.localnet'

/** A short digest of an owner, for names and markers where its path cannot go (a socket path, an env marker). */
export function ownerTag(owner: string): string {
  return createHash('sha256').update(owner).digest('hex').slice(0, 16)
}

/**
 * Runtime runc, the one gpunet is tested with and its development sandboxes need; default ulimits
 * under the hard limits such machines allow, since runc fails to set higher ones ("error setting rlimits");
 * cgroupfs and a file event log, because there may be no systemd.
 */
const CONTAINERS_CONF = `# Written by gpunet for its node; podman reads it through CONTAINERS_CONF.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`

/** Short image names resolve on Docker Hub, as job definitions written for Docker expect, and never prompt. */
const REGISTRIES_CONF = `# Written by gpunet for its node; podman reads it through CONTAINERS_REGISTRIES_CONF.
unqualified-search-registries = ["docker.io"]
short-name-mode = "permissive"
`

/** The notice on the result of an operation that asked for a GPU on a node without one. */
export const NO_GPU_NOTICE =
  'The operation asked for a GPU, but this node has none (no NVIDIA CDI device): it ran without.'

const CDI_SPECS = ['/etc/cdi', '/var/run/cdi'].flatMap((d) => ['yaml', 'json'].map((e) => `${d}/nvidia.${e}`))

/** The folder gpunet's podman configuration lives in unless the caller chooses one. */
export function defaultPodmanDataDir(): string {
  return join(process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'gpunet', 'podman')
}

/** Writes gpunet's podman configuration into `dataDir` and returns the environment that makes podman use it. */
export async function writePodmanConfig(dataDir: string): Promise<Record<string, string>> {
  await mkdir(dataDir, {recursive: true})
  const containersConf = join(dataDir, 'containers.conf')
  const registriesConf = join(dataDir, 'registries.conf')
  await writeFile(containersConf, CONTAINERS_CONF)
  await writeFile(registriesConf, REGISTRIES_CONF)
  return {CONTAINERS_CONF: containersConf, CONTAINERS_REGISTRIES_CONF: registriesConf}
}

/** Whether podman can run containers here, and why not when it cannot. */
export type RuntimeDetection = {available: true; version: string} | {available: false; reason: string}

/** Tells whether podman works on this machine (with gpunet's configuration) and why not. */
export async function detectRuntime(options: PodmanOptions = {}): Promise<RuntimeDetection> {
  const env = {...process.env, ...(await writePodmanConfig(options.dataDir ?? defaultPodmanDataDir()))}
  return new Promise((resolve) => {
    execFile(
      options.podman ?? 'podman',
      ['info', '--format', '{{.Version.Version}} {{.Host.OCIRuntime.Name}}'],
      {env, timeout: 30_000},
      (error, stdout, stderr) => {
        if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
          resolve({available: false, reason: 'podman is not installed (apt-get install podman runc catatonit).'})
        } else if (error) {
          const detail = stderr.trim().split('\n').pop() ?? error.message
          resolve({available: false, reason: `podman cannot run here: ${detail}`})
        } else {
          const [version = '', runtime = ''] = stdout.trim().split(' ')
          resolve(
            runtime === 'runc'
              ? {available: true, version}
              : {available: false, reason: `podman uses "${runtime}" instead of runc (apt-get install runc).`},
          )
        }
      },
    )
  })
}

/** The container name of an operation: readable, and unique per job and operation id. */
export function containerName(jobId: string, operationId: string): string {
  const clean = (s: string) => s.replace(/[^a-zA-Z0-9_.-]+/g, '_').slice(0, 48)
  const hash = createHash('sha256').update(`${jobId}\0${operationId}`).digest('hex').slice(0, 8)
  return `gpunet-${clean(jobId)}-${clean(operationId)}-${hash}`
}

/** Files and choices `podmanRunArgs` needs beyond the plan. */
export interface PodmanRunSetup {
  name: string
  jobId: string
  envFile: string
  cidFile: string
  authFile?: string
  ports: PublishedPort[]
  mounts?: readonly ResourceMount[]
  /** The job's named volumes: mounted read-write. */
  volumes?: readonly ResourceMount[]
  gpu: boolean
  pull: PullPolicy
  /** PodmanOptions.owner. */
  owner?: string
}

/** The `podman run` arguments of an operation. Env values travel in the env file, never in arguments. */
export function podmanRunArgs(plan: OperationPlan, setup: PodmanRunSetup): string[] {
  // --init: a shell or a server as PID 1 ignores SIGTERM, so stop() would always wait for the kill; the output
  // is captured from the attached streams, so no log file keeps it (or a secret a job prints) on disk.
  const args = ['run', '--rm', '--replace', '--init', '--name', setup.name, '--cidfile', setup.cidFile]
  args.push('--pull', setup.pull, '--log-driver', 'none', '--env-file', setup.envFile)
  args.push('--label', `gpunet.job=${setup.jobId}`, '--label', `gpunet.op=${plan.id}`)
  if (setup.owner !== undefined) args.push('--label', `${OWNER_LABEL}=${setup.owner}`)
  if (setup.authFile) args.push('--authfile', setup.authFile)
  if (plan.workDir !== undefined) args.push('--workdir', plan.workDir)
  if (plan.entrypoint) args.push('--entrypoint', JSON.stringify(plan.entrypoint))
  for (const p of setup.ports) args.push('--publish', `${p.host}:${p.hostPort}:${p.port}`)
  // Read-only, and relabelled (Z) for this container where SELinux is on; a no-op where it is off.
  for (const m of setup.mounts ?? []) args.push('--volume', `${m.source}:${m.target}:ro,Z`)
  // Shared by the job's operations (each its own container), so relabelled for all of them (z).
  for (const v of setup.volumes ?? []) args.push('--volume', `${v.source}:${v.target}:z`)
  if (setup.gpu) args.push('--device', 'nvidia.com/gpu=all')
  return [...args, '--', plan.image, ...commandArgv(plan.command)]
}

/**
 * The env file podman reads: one `NAME=value` per line, read literally. A line without `=` would make podman
 * copy that variable from its own environment, so values that would break lines are refused, not written.
 */
export function envFileText(env: Readonly<Record<string, string>>): string {
  checkEnvNames(env)
  for (const [name, value] of Object.entries(env)) {
    if (/[\n\r\0]/.test(value)) {
      throw new GpunetError('env_value_unsupported', `The value of environment variable ${name} has a line break.`, {
        hint: 'Container environment values are single lines here: encode the value (e.g. base64) and decode it in the job.',
        exitCode: ExitCode.INVALID_INPUT,
      })
    }
  }
  return Object.entries(env)
    .map(([name, value]) => `${name}=${value}\n`)
    .join('')
}

/** Refuses env names no runtime can pass on: empty, starting with "#", or holding "=", spaces or line breaks. */
export function checkEnvNames(env: Readonly<Record<string, string>>): void {
  for (const name of Object.keys(env)) {
    if (!/^[^=#\s\0][^=\s\0]*$/.test(name)) {
      throw new GpunetError('env_name_invalid', `Environment variable name ${JSON.stringify(name)} is not valid.`, {
        hint: 'Names cannot be empty, start with "#", or hold "=", spaces or line breaks.',
        exitCode: ExitCode.INVALID_INPUT,
      })
    }
  }
}

/** The auth file (containers-auth.json) holding an operation's registry credentials. */
export function authFileText(docker: {username: string; password: string; server?: string}): string {
  const server = docker.server ?? 'docker.io'
  const host = server.includes('://') ? new URL(server).host : server.replace(/\/.*$/, '')
  const registry = host === 'index.docker.io' ? 'docker.io' : host
  const auth = Buffer.from(`${docker.username}:${docker.password}`).toString('base64')
  return JSON.stringify({auths: {[registry]: {auth}}})
}

/** Runs operations in podman containers, with gpunet's own podman configuration. */
export class PodmanRuntime implements ContainerRuntime {
  readonly kind = 'podman'
  private readonly podman: string
  private readonly pull: PullPolicy
  private readonly dataDir: string
  private readonly gpuAvailable: boolean
  private readonly owner?: string
  /** ownerTag of the owner ('' without one): the API service's socket folder carries it. */
  private readonly tag: string
  private env?: NodeJS.ProcessEnv
  private api?: PodmanApi

  constructor(options: PodmanOptions = {}) {
    this.podman = options.podman ?? 'podman'
    this.pull = options.pull ?? 'missing'
    this.dataDir = options.dataDir ?? defaultPodmanDataDir()
    this.gpuAvailable = options.gpuAvailable ?? CDI_SPECS.some((f) => existsSync(f))
    this.owner = options.owner
    this.tag = options.owner === undefined ? '' : ownerTag(options.owner)
  }

  /** podman's environment with gpunet's configuration, written on first use. */
  private async podmanEnv(): Promise<NodeJS.ProcessEnv> {
    return (this.env ??= {...process.env, ...(await writePodmanConfig(this.dataDir))})
  }

  /**
   * Removes the containers of this owner that are there before its node runs any, and kills the podman API service
   * its node started: a node killed with SIGKILL (or a crash) leaves them running, its containers' `podman run`
   * orphaned, and no one else would stop them. Says what it ended; nothing without an owner.
   */
  async reclaim(): Promise<string[]> {
    if (this.owner === undefined) return []
    const env = await this.podmanEnv()
    const filter = `label=${OWNER_LABEL}=${this.owner}`
    const podman = (args: string[]) => promisify(execFile)(this.podman, args, {env})
    const {stdout} = await podman(['ps', '--all', '--quiet', '--no-trunc', '--filter', filter])
    const found = stdout
      .split('\n')
      .map((id) => id.trim())
      .filter((id) => /^[0-9a-f]{12,64}$/.test(id))
    if (found.length > 0) await podman(['rm', '--force', '--time', '0', ...found])
    const services = stopLeftServices(this.tag)
    return [
      ...(found.length > 0 ? [`${found.length} container${found.length === 1 ? '' : 's'}`] : []),
      ...(services > 0 ? ["podman's API service"] : []),
    ]
  }

  /** Starts the operation's container; resolves once podman has created it (or failed to). */
  async start(plan: OperationPlan, options: RunOptions): Promise<RunningOperation> {
    if (plan.type !== 'container/run') {
      throw new GpunetError(
        'operation_unsupported',
        `Operation ${plan.id}: ${plan.type} is not supported by this node.`,
      )
    }
    const env = await this.podmanEnv()
    const name = containerName(options.jobId, plan.id)
    const ports = await publishPorts(plan, options.hostPorts)
    // Last before spawning, so nothing can fail between writing the secrets and the cleanup that removes them.
    const secretFiles = await writeSecretFiles(plan)
    const gpu = plan.gpu && this.gpuAvailable
    const {mounts, volumes} = options
    const {jobId} = options
    const setup = {name, jobId, ports, mounts, volumes, gpu, pull: this.pull, owner: this.owner, ...secretFiles}
    const argv = podmanRunArgs(plan, setup)
    const run = spawnCollected(this.podman, argv, {
      env,
      logLimits: options.logLimits,
      redact: options.redact,
      onLine: options.onLine,
    })
    let stopped = false
    const result = run.outcome.then(async (o) => {
      await rm(secretFiles.dir, {recursive: true, force: true})
      const runtimeFailure = podmanFailure(o.exitCode, o.log.logs)
      return operationResult(plan.id, 'podman', o, {
        stopped,
        isolated: true,
        notices: plan.gpu && !gpu ? [NO_GPU_NOTICE] : [],
        ...(runtimeFailure === undefined ? {} : {runtimeFailure}),
      })
    })
    await containerCreated(secretFiles.cidFile, run)
    // podman has read the env and auth files once the container exists: the secrets leave the disk now.
    await Promise.all([secretFiles.envFile, secretFiles.authFile].map((f) => f && rm(f, {force: true})))
    const stop = async (graceSeconds = 10) => {
      stopped = true
      await spawnCollected(this.podman, ['stop', '--time', String(graceSeconds), name], {env}).outcome
      return result
    }
    return {name, ports, argv, pid: run.child.pid, result, stop}
  }

  /** Runs the operation's container to its end. */
  async run(plan: OperationPlan, options: RunOptions): Promise<OperationResult> {
    return (await this.start(plan, options)).result
  }

  /** A command in the operation's container, through podman's API (started on the first). */
  exec(op: RunningOperation, cmd: readonly string[], options: ExecOptions): ExecProcess {
    const api = (this.api ??= new PodmanApi(this.podman, () => this.env ?? process.env, this.tag))
    return markedSession((env) => api.exec(op.name, cmd, env, options))
  }

  /** Stops podman's API service if an exec started it. */
  async close(): Promise<void> {
    await this.api?.close()
  }

  /** `podman stats` of the operation's container. */
  sample(op: RunningOperation): Promise<ResourceSample | null> {
    return podmanSample(this.podman, this.env ?? process.env, op.name)
  }
}

/** The exit codes of podman itself: 125 it failed (an image not pulled), 126 and 127 the command cannot run. */
const PODMAN_EXIT_CODES = new Set([125, 126, 127])

/** podman's words when it could not get an image: a registry out of reach, or `--pull never` with no local copy. */
const IMAGE_UNAVAILABLE =
  /initializing source|pinging container registry|image not known|manifest unknown|short-name|pull/i

/** The ways out of an image the node cannot get, said after podman's own reason. */
export const PULL_FAILURE_HINT =
  'the node could not get the image: pull or build it on this machine first and start the localnet with `--pull never`, or run jobs without containers with `gpunet localnet start --runtime host` (no isolation)'

/**
 * podman's one-line reason when podman, not the operation's command, failed: its last `Error:` line, with the ways
 * out when the image could not be had (offline, most often).
 */
export function podmanFailure(exitCode: number, logs: readonly LogEntry[]): string | undefined {
  if (!PODMAN_EXIT_CODES.has(exitCode)) return undefined
  const reason = logs
    .findLast((entry) => entry.type === 'stderr' && entry.log.startsWith('Error: '))
    ?.log.slice('Error: '.length)
    .trim()
  if (reason === undefined || exitCode !== 125 || !IMAGE_UNAVAILABLE.test(reason)) return reason
  return `${reason} (${PULL_FAILURE_HINT})`
}

interface SecretFiles {
  dir: string
  envFile: string
  cidFile: string
  authFile?: string
}

async function writeSecretFiles(plan: OperationPlan): Promise<SecretFiles> {
  const envText = envFileText(plan.env)
  const docker = plan.authentication?.docker
  const authText = docker ? authFileText(docker) : undefined
  // mkdtemp makes the folder 0700; the files are 0600 on top, and never replace an existing file.
  const dir = await mkdtemp(join(tmpdir(), 'gpunet-op-'))
  const files: SecretFiles = {dir, envFile: join(dir, 'env'), cidFile: join(dir, 'cid')}
  try {
    await writeFile(files.envFile, envText, {mode: 0o600, flag: 'wx'})
    if (authText === undefined) return files
    const authFile = join(dir, 'auth.json')
    await writeFile(authFile, authText, {mode: 0o600, flag: 'wx'})
    return {...files, authFile}
  } catch (error) {
    await rm(dir, {recursive: true, force: true})
    throw error
  }
}

async function publishPorts(plan: OperationPlan, hostPorts: RunOptions['hostPorts'] = {}): Promise<PublishedPort[]> {
  const published: PublishedPort[] = []
  for (const p of plan.expose) {
    published.push({...p, host: '127.0.0.1', hostPort: hostPorts[p.port] ?? (await freePort())})
  }
  return published
}

async function containerCreated(cidFile: string, run: ChildRun): Promise<void> {
  let ended = false
  void run.outcome.then(() => (ended = true))
  while (!ended && !existsSync(cidFile)) await sleep(25)
}
