/**
 * A node agent: it serves one market as a remote node does, through a NodeNetwork. When idle it takes the job at
 * the head of the queue with `work`, or waits in the node queue so the next `list` starts a job on it at once.
 * It reacts to account changes (a subscription), never to a poll. Every job it is given is run or, when it
 * cannot be (a GPU it lacks, an image it cannot get, a broken definition), finished at once with a failed
 * result that says why, so the queue never waits on it. It runs one job at a time, serves exposed ports
 * through the gateway until the job's end (its run's start plus its timeout, which an `extend` moves; an `end` stops it
 * at once), and records each result with `finish`.
 */
import {EventEmitter} from 'node:events'

import {type Keypair, PublicKey} from '@solana/web3.js'

import {parseKey} from '../keys/base58-key.js'
import {findSecretReferences} from '../definition/secret-refs.js'
import type {JobDefinition} from '../definition/schema.js'
import type {NodeMembers} from '../definition/network-form/node-members.js'
import {NETWORK_VALIDATOR, readNetworkDefinition, runnableOnLocalnet} from '../definition/network-form/read.js'
import {GpunetError} from '../errors.js'
import type {JobFailure} from '../results/flow-state.js'
import type {JobAccount} from '../market/codec/accounts.js'
import {JobState, QueueType} from '../market/codec/accounts.js'
import {bytesToIpfsHash} from '../market/codec/ipfs-hash.js'
import {exposedPorts} from '../market/service-url.js'
import {SecretsClient} from '../secrets/client.js'
import {walletFromBytes} from '../keys/wallet.js'
import {FeedRegistry, type JobFeed} from './api-server/feed.js'
import type {ControlAction, ControlTarget, ControlVerdict, Endpoint, OperationAccess} from './api-server/access.js'
import type {NodeApiHost} from './api-server/server.js'
import {NodeChainClient} from './chain-client.js'
import {type JobPorts, JobRun} from './job-run.js'
import {jobDeploymentHash} from './network-names.js'
import {resolveLiterals} from './literals.js'
import type {NodeNetwork} from './network.js'
import {commandArgv, needsGpu, type OperationPlan, planSteps, substituteSecrets} from './operation-plan.js'
import type {ResourceOptions} from './resources.js'
import {ResultBuilder} from '../results/result-builder.js'
import type {ContainerRuntime, RunningOperation} from './runtime/runtime.js'

const NO_GPU_FAILURE: JobFailure = {
  code: 'gpu_unavailable',
  message: 'The job needs a GPU (an operation sets "gpu": true) and this node has none; it was not run.',
}

/** SOL (lamports) below which the agent tops up its fee balance. */
const MIN_FEE_LAMPORTS = 100_000_000n

/** Settings of a node agent. */
export interface NodeAgentOptions {
  network: NodeNetwork
  keypair: Keypair
  runtime: ContainerRuntime
  gateway: JobPorts
  /** The secrets service the node logs in to with `job`. */
  secretsUrl: string
  /** GPUs the node has: a job with a GPU operation fails at once on a node with none. */
  gpus: number
  /** How long an exposed port may take to pass its health checks, and how often they run. */
  readyTimeoutMs?: number
  healthIntervalMs?: number
  /** How often an up port's continuous health checks run again (the network's nodes: 30 s). */
  continuousIntervalMs?: number
  /** Size cap, timeout and Hugging Face endpoint of the resources operations download. */
  resources?: Pick<ResourceOptions, 'maxBytes' | 'timeoutMs' | 'hfEndpoint'>
  /** Progress lines for the localnet log; they name jobs and operations, never secret values. */
  log?: (line: string) => void
  /** Called when the node starts or ends a job. */
  onChange?: () => void
}

interface ActiveJob {
  job: PublicKey
  run: PublicKey
  address: string
  /** Its operations while they run. */
  steps?: JobRun
  /** The poster ended the job on chain: its run is gone and nothing can be recorded. */
  ended: boolean
  /** Its operations are over and its result is being recorded: the chain's changes are the node's own. */
  recording: boolean
  /** What the node API streams of it. */
  feed: JobFeed
  /** Its exposed ports, for the node API's `/endpoints`. */
  endpoints: Map<string, Endpoint>
  timedOut: boolean
  /** Aborted when the job is ended or times out: resource downloads stop then. */
  abort: AbortController
  /** The run's start (chain seconds) and the job's timeout as last read: its end is their sum. */
  startedAt?: bigint
  timeout?: bigint
  timeoutTimer?: NodeJS.Timeout
}

/** Events of a node agent, for the localnet log and tests. */
export interface NodeAgentEvents {
  /** A job was taken (its run exists on chain). */
  taken: [job: string]
  /** A job's result was recorded with `finish` (or could not be: `recorded` false). */
  finished: [job: string, result: ReturnType<ResultBuilder['build']>, recorded: boolean]
  /** The node is done with a job (finished, or ended on chain) and free for the next. */
  released: [job: string]
}

/** A node taking and running jobs of one market; it is also what its node API serves (api/server.ts). */
export class NodeAgent extends EventEmitter<NodeAgentEvents> implements NodeApiHost {
  readonly chain: NodeChainClient
  readonly feeds = new FeedRegistry()
  private current: ActiveJob | null = null
  private running: Promise<void> | null = null
  private closed = false
  private unsubscribe: (() => void) | undefined
  /** One look at the chain at a time; a change seen meanwhile asks for another. */
  private looking: Promise<void> | null = null
  private lookAgain = false
  /** Taken out of its market's queue (`localnet node leave`): it takes no job until it joins again. */
  private away = false

  constructor(private readonly options: NodeAgentOptions) {
    super()
    this.chain = new NodeChainClient(options.network, options.keypair)
  }

  /** The node's address. */
  get address(): string {
    return this.chain.address.toBase58()
  }

  /** The poster and timeout of the job at `job`, read from the chain. */
  async jobTerms(job: string): Promise<{poster: Uint8Array; timeoutSeconds: number} | null> {
    const address = parseKey(job)
    if (!address) return null
    const account = await this.chain.job(address).catch(() => null)
    return account ? {poster: account.project.toBytes(), timeoutSeconds: Number(account.timeout)} : null
  }

  /** The exposed ports of the job the node runs now. */
  endpoints(job: string): Record<string, Endpoint> | null {
    const active = this.current
    return active?.address === job ? Object.fromEntries(active.endpoints) : null
  }

  /**
   * Ends the job it runs as its poster asked through the node API. The network's nodes do it by bringing the job's
   * expiry forward (ExpiryHandler's `stop-job`), so it is recorded as a job that reached its timeout: flow `success`,
   * its operations `jobExpired`. The localnet's node does the same, so a script that stops a job this way sees here
   * what it will see on the network.
   */
  stop(job: string): boolean {
    const active = this.current
    if (!active || active.address !== job || active.ended || active.recording) return false
    if (!active.timedOut) {
      this.timeUp(active, 'Ending the job now, as its poster asked through the node API (its expiry brought forward)')
    }
    return true
  }

  /**
   * Restarts or stops one operation or group of the job it runs, as its poster asked through the node API; null
   * when it runs no such job (or it is ending).
   */
  control(job: string, target: ControlTarget, action: ControlAction): ControlVerdict | null {
    const active = this.current
    if (!active || active.address !== job || active.ended || active.timedOut) return null
    if (!active.steps) return {ok: false, why: 'idle', message: 'The job has not started its operations yet.'}
    const verdict = active.steps.control(target, action)
    if (verdict.ok) this.log(`node: job ${job}: ${action} of ${verdict.ops.join(', ')} asked through the node API`)
    return verdict
  }

  /** The operations of the job it runs now, for the node API's `/exec` and `/stats`. */
  operations(job: string): ReadonlyMap<string, OperationAccess> | null {
    const active = this.current
    if (!active || active.address !== job || active.ended || !active.steps) return null
    const {runtime} = this.options
    const access = (op: RunningOperation): OperationAccess => ({
      exec: (cmd, options) => runtime.exec(op, cmd, options),
      sample: () => runtime.sample(op),
    })
    return new Map([...active.steps.operations()].map(([id, op]) => [id, access(op)]))
  }

  /** The jobs the node runs now (one at most). */
  get runningJobs(): string[] {
    return this.current ? [this.current.address] : []
  }

  /** Funds the node when needed, closes the jobs a previous run left behind, and starts watching the market. */
  async start(): Promise<void> {
    await this.chain.prepare(MIN_FEE_LAMPORTS)
    // A localnet stopped while its node ran a job leaves the job running on chain; the container is gone, so
    // the node fails it with a result, which refunds the poster the unused time.
    for (const {address: run, run: account} of await this.chain.ownRuns()) {
      const result = new ResultBuilder(account.job.toBase58(), this.chain.address.toBase58())
      result.fail({code: 'interrupted', message: 'The localnet stopped while the job ran; it was not resumed.'})
      await this.record(account.job, run, result)
    }
    this.unsubscribe = this.options.network.onProgramChange(() => this.look())
    await this.lookNow()
  }

  /** Whether the node is out of its market's queue (`leave`), taking no job. */
  get left(): boolean {
    return this.away
  }

  /**
   * Takes the node out of its market's queue, as a node of the network that goes offline: the job it runs goes on
   * to its end, and it takes none after it until `join`.
   */
  async leave(): Promise<void> {
    this.away = true
    await this.looking
    const market = await this.chain.market()
    if (market?.queueType === QueueType.NODE && market.queue.some((k) => k.equals(this.chain.address)))
      await this.chain.leaveQueue()
    this.options.onChange?.()
  }

  /** Puts a node that left back: it takes the head job, or waits in the queue again. */
  join(): void {
    this.away = false
    this.options.onChange?.()
    this.look()
  }

  /** Stops watching, leaves the node queue, and stops the running job's operation without recording a result. */
  async close(): Promise<void> {
    this.closed = true
    this.unsubscribe?.()
    await this.looking
    if (this.current) {
      this.current.ended = true
      // The node goes away with its job still running on chain: its tunnels are lost, not ended (frps sees frpc's
      // control connection drop), whatever its operations' ends say afterwards.
      this.options.gateway.remove(this.current.address, 'lost')
      this.current.abort.abort()
      clearTimeout(this.current.timeoutTimer)
      this.current.steps?.stopAll(5)
    }
    await this.running
    this.feeds.close()
    try {
      const market = await this.chain.market()
      if (market?.queueType === QueueType.NODE && market.queue.some((k) => k.equals(this.chain.address)))
        await this.chain.leaveQueue()
    } catch (error) {
      this.log(`node: could not leave the queue: ${(error as Error).message}`)
    }
  }

  /** Looks at the chain again soon (after a change); looks are never run concurrently. */
  private look(): void {
    if (this.closed) return
    if (this.looking) {
      this.lookAgain = true
      return
    }
    void this.lookNow()
  }

  private async lookNow(): Promise<void> {
    this.looking = (async () => {
      do {
        this.lookAgain = false
        try {
          if (this.current) await this.watch(this.current)
          else await this.takeNext()
        } catch (error) {
          this.log(`node: ${(error as Error).message}`)
        }
      } while (this.lookAgain && !this.closed)
    })()
    await this.looking
    this.looking = null
  }

  /**
   * Idle: a run the chain gave this node (a `list` matched it in the node queue) starts at once; else `work`
   * takes the head job, or puts the node in the queue.
   */
  private async takeNext(): Promise<void> {
    if (this.closed) return
    let [given] = await this.chain.ownRuns()
    if (!given) {
      // A run given before it left is still run; nothing new is taken.
      if (this.away) return
      const market = await this.chain.market()
      if (!market) return
      const queued = market.queueType === QueueType.NODE && market.queue.some((k) => k.equals(this.chain.address))
      if (queued) return
      await this.chain.prepare(MIN_FEE_LAMPORTS)
      const run = await this.chain.work()
      if (market.queueType !== QueueType.JOB) {
        this.log('node: waiting in the market queue')
        return
      }
      const account = await this.chain.run(run)
      if (!account) return
      given = {address: run, run: account}
    }
    const job = given.run.job
    const address = job.toBase58()
    const active: ActiveJob = {
      job,
      run: given.address,
      address,
      ended: false,
      recording: false,
      timedOut: false,
      abort: new AbortController(),
      feed: this.feeds.open(address),
      endpoints: new Map(),
    }
    this.current = active
    active.feed.status('running', {node: this.address})
    active.feed.notice('info', `Node ${this.address} took the job`)
    this.log(`node: took job ${active.address}`)
    this.options.onChange?.()
    this.emit('taken', active.address)
    const account = await this.chain.job(job)
    if (account) {
      active.startedAt = given.run.time
      this.armTimeout(active, account.timeout)
    }
    this.running = this.runJob(active, account).finally(() => {
      clearTimeout(active.timeoutTimer)
      this.current = null
      this.options.onChange?.()
      this.emit('released', active.address)
      // The node is free: the next job, or the queue.
      this.look()
    })
  }

  /**
   * Stops the job's operation once its paid time is over: the run's start plus the job's timeout, as the network's
   * nodes count it. Armed again when an extension raises the timeout.
   */
  private armTimeout(active: ActiveJob, timeout: bigint): void {
    clearTimeout(active.timeoutTimer)
    active.timeout = timeout
    const endsAtMs = Number(active.startedAt! + timeout) * 1000
    active.timeoutTimer = setTimeout(() => void this.expire(active), Math.max(0, endsAtMs - Date.now()))
  }

  /** The job's paid time looks over: stops it, unless the account says it was extended meanwhile. */
  private async expire(active: ActiveJob): Promise<void> {
    // One read at the end, so an extension whose notification was missed (or is still on its way) is not cut short.
    const job = await this.chain.job(active.job).catch(() => null)
    if (this.current !== active || active.ended || active.timedOut || active.recording) return
    if (job?.state === JobState.QUEUED && job.timeout > active.timeout!) return this.extended(active, job.timeout)
    this.timeUp(active, 'The job reached its timeout; stopping it')
  }

  /** Ends the job as its time being up: its operations stopped, recorded as the network records an expired job. */
  private timeUp(active: ActiveJob, why: string): void {
    active.timedOut = true
    active.feed.notice('info', why)
    this.log(`node: job ${active.address}: ${why}`)
    active.abort.abort()
    active.steps?.stopAll()
  }

  /** Moves the job's end to its run's start plus its new timeout. */
  private extended(active: ActiveJob, timeout: bigint): void {
    this.armTimeout(active, timeout)
    const endsAt = new Date(Number(active.startedAt! + timeout) * 1000).toISOString()
    active.feed.notice('info', `The job was extended: its timeout is now ${timeout} s, so it ends at ${endsAt}`)
    this.log(`node: job ${active.address} extended to ${timeout} s; it ends at ${endsAt}`)
  }

  /**
   * Follows the job's accounts while it runs, as the network's nodes follow the job account: an extension (a
   * larger timeout) moves its end; a job that is no longer running (its run closed by `end`, the job settled or
   * its account gone) is stopped now.
   */
  private async watch(active: ActiveJob): Promise<void> {
    if (active.ended || active.recording) return
    const [run, job] = await Promise.all([this.chain.run(active.run), this.chain.job(active.job)])
    if (this.current !== active || active.ended) return
    if (!run || !job || job.state !== JobState.QUEUED) return this.endedOnChain(active)
    if (!active.timedOut && active.timeout !== undefined && job.timeout > active.timeout)
      this.extended(active, job.timeout)
  }

  /** Stops the operation of a job its poster ended on chain: nothing but `complete` can be recorded now. */
  private endedOnChain(active: ActiveJob): void {
    active.ended = true
    clearTimeout(active.timeoutTimer)
    active.feed.notice('info', 'The job was ended on chain; stopping it')
    this.log(`node: job ${active.address} was ended on chain; stopping it`)
    this.options.gateway.remove(active.address)
    active.abort.abort()
    active.steps?.stopAll()
  }

  private async definition(
    job: JobAccount,
  ): Promise<{definition: JobDefinition; members: NodeMembers} | {failure: JobFailure}> {
    const cid = bytesToIpfsHash(job.ipfsJob)
    const bytes = await this.options.network.getContent(cid)
    if (!bytes)
      return {failure: {code: 'definition_missing', message: `The content store does not hold the definition ${cid}.`}}
    let value: unknown
    try {
      value = JSON.parse(Buffer.from(bytes).toString('utf8'))
    } catch {
      return {failure: {code: 'definition_invalid', message: `The definition ${cid} is not JSON.`}}
    }
    // As a node of the live network does: its validator first, then what this node can run of what it took.
    const read = readNetworkDefinition(value)
    const runnable = read.ok ? await runnableOnLocalnet(read.document) : read
    if (runnable.ok) return {definition: runnable.definition, members: runnable.members}
    const issues = runnable.issues.map((e) => `${e.path || '(document)'}: ${e.message}`)
    const refusal = read.ok ? "the localnet's node cannot run it" : `${NETWORK_VALIDATOR} refuses it`
    return {
      failure: {
        code: 'definition_invalid',
        message: `The definition ${cid} is not valid (${refusal}): ${issues.join('; ')}`,
      },
    }
  }

  private async runJob(active: ActiveJob, account: JobAccount | null): Promise<void> {
    const result = new ResultBuilder(active.address, this.chain.address.toBase58())
    try {
      const loaded = account
        ? await this.definition(account)
        : {failure: {code: 'job_missing', message: 'The job account is gone.'}}
      if ('failure' in loaded) result.fail(loaded.failure)
      else if (this.options.gpus === 0 && needsGpu(loaded.definition)) result.fail(NO_GPU_FAILURE)
      else await this.runOperations(active, account!, loaded, result)
    } catch (error) {
      // A download the timeout broke off is no failure: the network's nodes count a job that reached its timeout
      // as done (`success`, recorded with `finish`).
      const code = error instanceof GpunetError ? error.code : 'node_error'
      if (!active.timedOut) result.fail({code, message: (error as Error).message})
    }
    active.recording = true
    this.options.gateway.remove(active.address)
    active.endpoints.clear()
    if (this.closed) return
    if (!active.ended) return this.record(active.job, active.run, result, active.feed)
    // Its poster ended it: the job is Done already, and the node records what ran with `complete`, as the
    // network's nodes do, so the output up to the stop is kept.
    result.stop()
    await this.record(active.job, null, result, active.feed)
  }

  /** Uploads the result to the content store and records it: `finish` for a running job, `complete` for an ended one. */
  private async record(job: PublicKey, run: PublicKey | null, result: ResultBuilder, feed?: JobFeed): Promise<void> {
    const document = result.build()
    const failure = document.gpunet.failure
    if (failure) feed?.notice('error', failure.message)
    const address = job.toBase58()
    let recorded = false
    try {
      const cid = await this.options.network.addContent(Buffer.from(`${JSON.stringify(document)}\n`))
      if (run) await this.chain.finish(job, run, cid)
      else await this.chain.complete(job, cid)
      recorded = true
      feed?.notice('info', `The job ended: ${document.status}; result ${cid}`)
      this.log(`node: job ${address} ${document.status}; result ${cid}`)
    } catch (error) {
      feed?.notice('error', `The result could not be recorded: ${(error as Error).message}`)
      this.log(`node: could not record the result of job ${address}: ${(error as Error).message}`)
    }
    feed?.end(document)
    this.emit('finished', address, document, recorded)
  }

  /** What the node says it starts: the image, or on host processes the command itself, with no isolation said. */
  private startingWhat(plan: OperationPlan): string {
    if (this.options.runtime.kind !== 'host-process') return `starting ${plan.image}`
    const argv = [...(plan.entrypoint ?? []), ...commandArgv(plan.command)]
    return `starting \`${argv.join(' ')}\` as a host process: NO isolation, image ${plan.image} not used`
  }

  private async runOperations(
    active: ActiveJob,
    account: JobAccount,
    {definition, members}: {definition: JobDefinition; members: NodeMembers},
    result: ResultBuilder,
  ): Promise<void> {
    // The network's `%%global.…%%` literals first, so a variable may hold a secret's reference.
    const globals = {job: active.address, project: account.project.toBase58(), host: this.address}
    const resolved = resolveLiterals(definition, {...globals, variables: members.variables})
    const steps = planSteps(resolved, members)
    const secrets = findSecretReferences(steps).length > 0 ? await this.jobSecrets(active.address) : {}
    // All references are resolved before the first operation starts: a missing secret fails the job at once.
    const run = new JobRun({
      job: active.address,
      runtime: this.options.runtime,
      gateway: this.options.gateway,
      feed: active.feed,
      result,
      endpoints: active.endpoints,
      redact: secrets,
      // The port `job post` prints at the job's own URL: served there by every operation that exposes it.
      jobPort: exposedPorts(definition)[0],
      // Counted over the definition as posted (volume operations too), as the network's node counts them.
      opIndexes: new Map(members.ops.map((op, index) => [op.id, index])),
      deploymentHash: jobDeploymentHash(members.deploymentId, globals.project),
      deploymentId: members.deploymentId,
      readyTimeoutMs: this.options.readyTimeoutMs,
      healthIntervalMs: this.options.healthIntervalMs,
      continuousIntervalMs: this.options.continuousIntervalMs,
      resources: this.options.resources,
      signal: active.abort.signal,
      jobStopped: () => active.ended,
      jobExpired: () => active.timedOut,
      startingWhat: (plan) => this.startingWhat(plan),
      log: (line) => this.log(line),
    })
    const planned = substituteSecrets(steps, secrets)
    active.steps = run
    // Ended or timed out (or stopped through the node API) while its secrets were read: nothing starts.
    if (!(active.ended || active.timedOut)) await run.run(planned)
    active.steps = undefined
  }

  /** The poster's secrets this job refers to, through a job-scoped login of the node. */
  private jobSecrets(job: string): Promise<Record<string, string>> {
    const wallet = walletFromBytes(this.options.keypair.secretKey, 'localnet node')
    return new SecretsClient({url: this.options.secretsUrl, wallet, job, cache: null}).list()
  }

  private log(line: string): void {
    this.options.log?.(line)
  }
}
