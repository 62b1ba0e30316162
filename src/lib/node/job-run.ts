/**
 * One job's steps run as the network's nodes run them (nosana-ci/nosana-cli, TaskManager): group after group in the
 * order of each group's first operation; inside a group every operation whose dependencies are met starts at once,
 * and one that `depends_on` others starts once each of them is up (started, and its exposed ports through their
 * health checks). An operation that ends is started again as its `restart_policy` says; one whose dependency ended
 * is stopped when it has `stop_if_dependent_stops`. Unlike the network's nodes, and as spec 0.1 says, the first
 * operation that fails fails the job: the rest of its group is stopped and no later group starts.
 */
import {mkdir, mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {GpunetError} from '../errors.js'
import {portLabel} from '../market/service-url.js'
import type {JobFeed, OpInfo} from './api-server/feed.js'
import type {ControlAction, ControlTarget, ControlVerdict, Endpoint} from './api-server/access.js'
import {type CheckOutcome, DEFAULT_CONTINUOUS_INTERVAL_MS, runChecks, waitUntilReady} from './health.js'
import {type OperationPlan, type StepPlan, type VolumePlan} from './operation-plan.js'
import {type NetworkName, networkNames} from './network-names.js'
import {loadResources, type ResourceMount, type ResourceOptions} from './resources.js'
import {mergeRuns, type ResultBuilder} from '../results/result-builder.js'
import type {OperationResult} from '../results/operation-result.js'
import type {ContainerRuntime, RunningOperation} from './runtime/runtime.js'

/** The first pause before a restart; it doubles with each restart, up to RESTART_DELAY_MAX_MS (as podman's). */
const RESTART_DELAY_MS = 100
const RESTART_DELAY_MAX_MS = 5000

/**
 * What a node asks of the gateway that serves its jobs' exposed ports (gateway/gateway.ts is one): the node only
 * announces and takes down ports, so it needs no more of the gateway than this.
 */
export interface JobPorts {
  /** The URL a job's first exposed port is served at, or that of exposed port `port`. */
  jobUrl(job: string, port?: number): string
  /** Announces exposed ports of a job, each answering 404 until `ready`. */
  register(job: string, ports: readonly number[]): void
  /** Takes down the given ports of a job. */
  withdraw(job: string, ports: readonly number[]): void
  /** Sends the traffic of the job's exposed `port` to `hostPort` on 127.0.0.1 from now on. */
  ready(job: string, port: number, hostPort: number): void
  /**
   * Takes the job's service down: its job ended (`graceful`, the default), or its node is going away with the job
   * still running (`lost`), which is what its deployment proxies' unregistering says (gateway/proxy-events.ts).
   */
  remove(job: string, reason?: 'lost' | 'graceful'): void
  /**
   * Serves the job's exposed ports also under the network's names (their expose-id hashes, and their deployment's
   * domain and load-balancer groups), as the network's node registers them with its FRP server; `withdraw` and
   * `remove` take them down with the ports.
   */
  serveNames(job: string, names: readonly NetworkName[]): void
}

/** What a job's run needs of its node. */
export interface JobRunContext {
  job: string
  runtime: ContainerRuntime
  gateway: JobPorts
  feed: JobFeed
  result: ResultBuilder
  /** The node API's `/endpoints` of the job, kept current here. */
  endpoints: Map<string, Endpoint>
  /** Secret values to mask in output. */
  redact: Readonly<Record<string, string>>
  /** The port served at the job's own URL. */
  jobPort: number | undefined
  /** Each operation's index in the definition as posted: its ports' expose-id hashes are counted from it. */
  opIndexes: ReadonlyMap<string, number>
  /** The job's deployment hash, when its definition has a `deployment_id`. */
  deploymentHash?: string
  /** Its definition's `deployment_id` (the metadata its deployment proxies carry). */
  deploymentId?: string
  readyTimeoutMs?: number
  healthIntervalMs?: number
  continuousIntervalMs?: number
  resources?: Pick<ResourceOptions, 'maxBytes' | 'timeoutMs' | 'hfEndpoint'>
  /** Aborted when the job is ended, stopped or times out. */
  signal: AbortSignal
  /** Why a stop of the whole job happened, for each operation's result: by its poster or its end, or its timeout. */
  jobStopped: () => boolean
  jobExpired: () => boolean
  /** What the node says it starts (the image, or the host command). */
  startingWhat: (plan: OperationPlan) => string
  log: (line: string) => void
}

type Step = OperationPlan & {execution: StepPlan['execution']}

/** An operation of the running group: whether it runs and is up, and how to stop or restart it. */
interface Running {
  step: StepPlan
  state: 'waiting' | 'running' | 'ended'
  /** Resolves true once it is up (dependents start), false when it ended (or never started) before. */
  up: Promise<boolean>
  markUp: (up: boolean) => void
  /** Stops it for good (no restart); `accepted`: a stop that is the job's course, not a failure. */
  stop: (accepted: boolean, graceSeconds?: number) => void
  /** Stops its command and starts it again (its poster asked). */
  restart: () => void
  /** Its process while one runs (between restarts there is none). */
  op?: RunningOperation
}

/** Runs one job's steps; `stopAll` ends what runs and starts nothing more. */
export class JobRun {
  private readonly running = new Map<string, Running>()
  private steps: readonly StepPlan[] = []
  private currentGroup: string | null = null
  private volumesDir: string | null = null
  private failed = false
  private stopping = false

  constructor(private readonly ctx: JobRunContext) {}

  /** Runs every group in order; resolves when the job's last operation ended. */
  async run(steps: readonly StepPlan[]): Promise<void> {
    this.steps = steps
    const groups = [...new Set(steps.map((s) => s.execution.group))]
    try {
      for (const group of groups) {
        if (this.over()) break
        this.currentGroup = group
        await this.runGroup(steps.filter((s) => s.execution.group === group))
      }
    } finally {
      this.currentGroup = null
      if (this.volumesDir) await rm(this.volumesDir, {recursive: true, force: true})
    }
  }

  /** The operations of the running group whose process runs now, by id: the node API's `/exec` and `/stats`. */
  operations(): Map<string, RunningOperation> {
    const ops = new Map<string, RunningOperation>()
    for (const [id, entry] of this.running) if (entry.state === 'running' && entry.op) ops.set(id, entry.op)
    return ops
  }

  /** Stops every running operation (the job ended, was stopped or timed out); nothing starts or restarts after. */
  stopAll(graceSeconds?: number): void {
    this.stopping = true
    for (const op of this.running.values()) op.stop(false, graceSeconds)
  }

  private over(): boolean {
    return this.stopping || this.failed || this.ctx.signal.aborted
  }

  private async runGroup(steps: StepPlan[]): Promise<void> {
    this.running.clear()
    for (const step of steps) {
      let markUp: (up: boolean) => void = () => {}
      const up = new Promise<boolean>((resolve) => (markUp = resolve))
      this.running.set(step.id, {step, state: 'waiting', up, markUp, stop: () => {}, restart: () => {}})
    }
    const inGroup = new Set(steps.map((s) => s.id))
    // Dependencies of earlier groups have run already; those of this group must be up first.
    await Promise.all(
      steps.map((step) =>
        this.startWhenReady(
          this.running.get(step.id)!,
          step.execution.dependsOn.filter((id) => inGroup.has(id)),
        ),
      ),
    )
  }

  private async startWhenReady(entry: Running, dependencies: string[]): Promise<void> {
    for (const id of dependencies) {
      const up = await this.running.get(id)!.up
      if (this.over()) return this.neverStarted(entry)
      if (!up) {
        this.notice(`Operation ${entry.step.id}: not started, as ${id}, which it depends on, ended before it was up`)
        return this.neverStarted(entry)
      }
    }
    if (this.over() || entry.state === 'ended') return this.neverStarted(entry)
    await this.startStep(entry)
  }

  private neverStarted(entry: Running): void {
    entry.state = 'ended'
    entry.markUp(false)
  }

  private startStep(entry: Running): Promise<void> {
    const {step, markUp} = entry
    let stopped: {accepted: boolean} | null = null
    let restartAsked = false
    let current: RunningOperation | undefined
    entry.state = 'running'
    entry.stop = (accepted, graceSeconds) => {
      stopped ??= {accepted}
      void current?.stop(graceSeconds)
    }
    entry.restart = () => {
      restartAsked = true
      void current?.stop(5)
    }
    const operate = async () => {
      if (isVolume(step)) return this.createVolume(step, markUp)
      await this.operate(step, {
        isStopped: () => stopped,
        takeRestart: () => {
          const asked = restartAsked
          restartAsked = false
          return asked
        },
        setCurrent: (op) => (current = entry.op = op),
        markUp,
      })
    }
    return operate()
      .catch((error: unknown) => {
        this.failed = true
        // A download the timeout broke off is no failure: the job ran to its timeout, which the network counts as done.
        if (this.ctx.jobExpired()) return
        const code = error instanceof GpunetError ? error.code : 'node_error'
        this.ctx.result.fail({code, message: (error as Error).message})
        for (const other of this.running.values()) if (other.step.id !== step.id) other.stop(true, 5)
      })
      .finally(() => {
        entry.state = 'ended'
        markUp(false)
        this.dependencyEnded(step.id)
      })
  }

  /**
   * Restarts or stops one running operation (`op`) or every running operation of a group (`group`), as the
   * poster asked through the node API. Only the group that runs now has running operations.
   */
  control(target: ControlTarget, action: ControlAction): ControlVerdict {
    const named = 'op' in target ? `operation ${target.op}` : `group ${target.group}`
    const inGroup = (s: StepPlan) => target.group === undefined || s.execution.group === target.group
    const known = 'op' in target ? this.steps.some((s) => s.id === target.op && inGroup(s)) : this.steps.some(inGroup)
    if (!known) {
      const where = 'op' in target && target.group !== undefined ? ` in group ${target.group}` : ''
      return {ok: false, why: 'unknown', message: `The job has no ${named}${where}.`}
    }
    const entries = [...this.running.values()].filter((e) =>
      'op' in target ? e.step.id === target.op : e.step.execution.group === target.group,
    )
    const live = entries.filter((e) => e.state === 'running' && !isVolume(e.step))
    if (live.length === 0 || this.over()) {
      const now = this.currentGroup === null ? 'none runs now' : `group ${this.currentGroup} runs now`
      return {ok: false, why: 'idle', message: `The job's ${named} is not running (${now}).`}
    }
    for (const entry of live) {
      this.notice(
        `Operation ${entry.step.id}: ${action === 'stop' ? 'stopping' : 'restarting'} it, as its poster asked`,
      )
      if (action === 'stop') entry.stop(true, 5)
      else entry.restart()
    }
    return {ok: true, ops: live.map((e) => e.step.id)}
  }

  /** Stops the operations of the group that asked to stop with `id` (`stop_if_dependent_stops`). */
  private dependencyEnded(id: string): void {
    for (const other of this.running.values()) {
      const {execution} = other.step
      if (execution.stopIfDependentStops && execution.dependsOn.includes(id)) {
        this.notice(`Operation ${other.step.id}: stopping it, as ${id}, which it depends on, ended`)
        other.stop(true)
      }
    }
  }

  private async createVolume(step: VolumePlan, markUp: (up: boolean) => void): Promise<void> {
    await this.volumePath(step.volume)
    this.ctx.feed.notice('info', `Operation ${step.id}: volume ${step.volume} created`)
    markUp(true)
  }

  /** The folder of the job's named volume `name`, made on first use (as a container engine makes a named volume). */
  private async volumePath(name: string): Promise<string> {
    this.volumesDir ??= await mkdtemp(join(tmpdir(), 'gpunet-vol-'))
    const path = join(this.volumesDir, Buffer.from(name).toString('hex'))
    await mkdir(path, {recursive: true})
    return path
  }

  private async operate(
    step: Step,
    control: {
      isStopped: () => {accepted: boolean} | null
      /** Whether the poster asked for a restart since the last call. */
      takeRestart: () => boolean
      setCurrent: (op: RunningOperation | undefined) => void
      markUp: (up: boolean) => void
    },
  ): Promise<void> {
    const {ctx} = this
    const {feed} = ctx
    if (step.resources.length > 0) {
      feed.notice('info', `Operation ${step.id}: loading its resources`)
      ctx.log(`node: job ${ctx.job}: operation ${step.id} loading resources`)
    }
    // A failed download throws `resource_failed`, which fails the job before its operation starts.
    const resources = await loadResources(step.resources, {...ctx.resources, env: step.env, signal: ctx.signal})
    const runs: OperationResult[] = []
    let acceptStop = false
    try {
      const volumes: ResourceMount[] = []
      for (const v of step.execution.volumes) volumes.push({source: await this.volumePath(v.name), target: v.dest})
      const onLine = (stream: 'stdout' | 'stderr', text: string, timestamp: number) =>
        feed.line(step.id, stream, text.endsWith('\n') ? text.slice(0, -1) : text, timestamp)
      const options = {
        jobId: ctx.job,
        redact: ctx.redact,
        mounts: resources.mounts,
        volumes,
        onLine,
        signal: ctx.signal,
      }
      feed.notice('info', `Operation ${step.id}: ${ctx.startingWhat(step)}`)
      ctx.log(`node: job ${ctx.job}: operation ${step.id} starting`)
      // Restarts the poster asks for do not count against `restart_tries`.
      let policyRestarts = 0
      for (let restarts = 0; ; restarts++) {
        const op = await ctx.runtime.start(step, options)
        control.setCurrent(op)
        if (restarts === 0) feed.opStarted(step.id, step.execution.group)
        // Stopped while it was starting: nothing stopped it then.
        if (control.isStopped() || this.stopping) void op.stop(5)
        const service = this.serve(step, op, control.markUp)
        const outcome = await op.result
        service.end()
        control.setCurrent(undefined)
        runs.push(outcome)
        acceptStop = control.isStopped()?.accepted === true
        ctx.log(`node: job ${ctx.job}: operation ${step.id} exited with ${outcome.exitCode}`)
        const asked = control.takeRestart() && control.isStopped() === null && !this.over()
        if (asked) acceptStop = false
        const stopped = control.isStopped() !== null || acceptStop
        const again = asked || this.restartWanted(step, outcome, policyRestarts, stopped)
        if (!again) break
        if (!asked) policyRestarts++
        const limit = step.execution.restart.policy === 'on-failure' ? step.execution.restart.tries : undefined
        const which = limit === undefined ? `restart ${policyRestarts}` : `restart ${policyRestarts} of ${limit}`
        const why = asked
          ? `exited with code ${outcome.exitCode}; starting it again, as its poster asked`
          : `exited with code ${outcome.exitCode}; restarting it (${which}, restart_policy ${step.execution.restart.policy})`
        feed.notice('info', `Operation ${step.id}: ${why}`)
        feed.status('restarting', {op: step.id, exitCode: String(outcome.exitCode), restart: String(restarts + 1)})
        ctx.log(`node: job ${ctx.job}: operation ${step.id} ${why}`)
        const delay = asked ? 0 : Math.min(RESTART_DELAY_MS * 2 ** (policyRestarts - 1), RESTART_DELAY_MAX_MS)
        await sleep(delay, undefined, {signal: ctx.signal}).catch(() => undefined)
        if (this.over() || control.isStopped()) break
      }
    } finally {
      await resources.cleanup()
    }
    const outcome = mergeRuns(runs)
    const jobStopped = ctx.jobStopped()
    const jobExpired = ctx.jobExpired()
    const goOn = ctx.result.add(outcome, {
      acceptStop,
      jobStopped,
      jobExpired,
      group: step.execution.group,
      restarts: runs.slice(0, -1).map((r) => ({exitCode: r.exitCode, endTime: Date.parse(r.endedAt)})),
      results: step.execution.results,
    })
    const endsJob = !goOn && !jobStopped && !jobExpired
    // An exit that fails the job is said once, by the job's failure notice (the same words): not twice in its logs.
    if (!endsJob) feed.notice('info', `Operation ${step.id}: exited with code ${outcome.exitCode}`)
    // The status the result gives it, so `/job/<job>/info` and the recorded result never disagree.
    ctx.feed.opEnded(step.id, outcome.exitCode, ctx.result.lastOpStatus as OpInfo['status'])
    if (endsJob) {
      this.failed = true
      // The first failure ends the job: what else of the group runs is stopped, as part of that end.
      for (const other of this.running.values()) if (other.step.id !== step.id) other.stop(true, 5)
    }
  }

  /** Whether `restart_policy` starts the command again: never after a stop, nor when the runtime could not run it. */
  private restartWanted(step: Step, outcome: OperationResult, restarts: number, stopped: boolean): boolean {
    if (stopped || outcome.stopped || outcome.runtimeFailure !== undefined || this.over()) return false
    const rule = step.execution.restart
    if (rule.policy === 'no') return false
    if (rule.policy === 'always' || rule.policy === 'unless-stopped') return true
    return outcome.exitCode !== 0 && (rule.tries === undefined || restarts < rule.tries)
  }

  /**
   * Serves the operation's exposed ports through the gateway, each once its own health checks pass (the job's port
   * at the job's URL; every one at its port's URL), re-runs its continuous checks while it runs (they set the
   * endpoint's ONLINE/OFFLINE), and takes its ports down when it ends (the job's end stops it).
   * `markUp` is told once every port is up (at once without ports): its dependents start then.
   */
  private serve(step: Step, op: RunningOperation, markUp: (up: boolean) => void) {
    const {ctx} = this
    const {gateway, job} = ctx
    const abort = new AbortController()
    const ports = op.ports.map((p) => p.port)
    if (ports.length === 0) markUp(true)
    gateway.register(job, ports.includes(ctx.jobPort ?? -1) ? [ctx.jobPort!, ...ports] : ports)
    const opIndex = ctx.opIndexes.get(step.id) ?? 0
    gateway.serveNames(
      job,
      networkNames({
        job,
        opIndex,
        opId: step.id,
        deploymentHash: ctx.deploymentHash,
        deploymentId: ctx.deploymentId,
        ports: op.ports,
      }),
    )
    const timing = {timeoutMs: ctx.readyTimeoutMs, intervalMs: ctx.healthIntervalMs}
    const endpoint = (port: number, status: Endpoint['status']) =>
      ctx.endpoints.set(portLabel(job, port), {opID: step.id, port, url: gateway.jobUrl(job, port), status})
    for (const port of ports) endpoint(port, 'OFFLINE')
    let upCount = 0
    for (const port of op.ports) {
      void waitUntilReady(port, {...timing, signal: abort.signal}).then((readiness) => {
        if (abort.signal.aborted) return
        if (readiness.ready) {
          gateway.ready(job, port.port, port.hostPort)
          endpoint(port.port, 'ONLINE')
          if (++upCount === op.ports.length) markUp(true)
          void this.watchContinuously(port, abort.signal, (online, outcome) => {
            endpoint(port.port, online ? 'ONLINE' : 'OFFLINE')
            const what = online
              ? 'passes its continuous health checks again: online'
              : `failed a continuous health check (${outcome.detail}): offline`
            ctx.feed.notice(online ? 'info' : 'error', `Operation ${step.id}: port ${port.port} ${what}`)
            ctx.log(`node: job ${job}: port ${port.port} ${online ? 'online' : 'offline'}: ${outcome.detail}`)
          })
        }
        ctx.log(`node: job ${job}: port ${port.port} ${readiness.ready ? 'ready' : readiness.detail}`)
      })
    }
    return {
      end: () => {
        abort.abort()
        gateway.withdraw(job, ports)
        for (const port of ports) endpoint(port, 'OFFLINE')
      },
    }
  }

  /** Re-runs a port's continuous checks while it runs; `changed` is told each time the port goes off or back on line. */
  private async watchContinuously(
    port: Step['expose'][number] & {host: string; hostPort: number},
    signal: AbortSignal,
    changed: (online: boolean, outcome: CheckOutcome) => void,
  ): Promise<void> {
    const checks = port.health_checks.filter((_, i) => port.continuous?.[i] === true)
    if (checks.length === 0) return
    const intervalMs = this.ctx.continuousIntervalMs ?? DEFAULT_CONTINUOUS_INTERVAL_MS
    let online = true
    while (!signal.aborted) {
      await sleep(intervalMs, undefined, {signal}).catch(() => undefined)
      if (signal.aborted) return
      const outcomes = await runChecks({host: port.host, hostPort: port.hostPort, health_checks: checks})
      if (signal.aborted) return
      const failed = outcomes.find((o) => !o.ok)
      if (!failed === online) continue
      online = !failed
      changed(online, failed ?? outcomes[0]!)
    }
  }

  private notice(text: string): void {
    this.ctx.feed.notice('info', text)
    this.ctx.result.notice(text)
    this.ctx.log(`node: job ${this.ctx.job}: ${text}`)
  }
}

function isVolume(step: StepPlan): step is VolumePlan {
  return step.type === 'container/create-volume' && 'volume' in step
}
