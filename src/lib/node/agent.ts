/**
 * A node agent: it serves one market as a remote node does, through a NodeNetwork. When idle it takes the job at
 * the head of the queue with `work`, or waits in the node queue so the next `list` starts a job on it at once.
 * It reacts to account changes (a subscription), never to a poll. Every job it is given is run or, when it
 * cannot be (a GPU it lacks, an image it cannot get, a broken definition), finished at once with a failed
 * result that says why, so the queue never waits on it. It runs one job at a time, serves exposed ports
 * through the gateway, and records each result with `finish`.
 */
import {EventEmitter} from 'node:events'

import {type Keypair, PublicKey} from '@solana/web3.js'

import {parseKey} from '../base58-text.js'
import {findSecretReferences} from '../definition/secret-refs.js'
import type {JobDefinition} from '../definition/schema.js'
import {NETWORK_VALIDATOR, readNetworkDefinition, runnableOnLocalnet} from '../definition/network-form/read.js'
import {GpunetError} from '../errors.js'
import type {JobFailure} from '../flow-state.js'
import type {JobAccount} from '../market/accounts.js'
import {QueueType} from '../market/accounts.js'
import {bytesToIpfsHash} from '../market/ipfs-hash.js'
import {exposedPorts, portLabel} from '../market/service-url.js'
import {SecretsClient} from '../secrets/client.js'
import {walletFromBytes} from '../wallet.js'
import {FeedRegistry, type JobFeed, type OpInfo} from './api/feed.js'
import type {Endpoint, NodeApiHost, OperationAccess} from './api/server.js'
import {NodeChainClient} from './chain-client.js'
import type {Gateway} from './gateway.js'
import {waitUntilReady} from './health.js'
import type {NodeNetwork} from './network.js'
import {needsGpu, planOperations, substituteSecrets} from './operation-plan.js'
import {loadResources, type ResourceOptions} from './resources.js'
import {ResultBuilder} from './results.js'
import type {ContainerRuntime, RunningOperation} from './runtime/runtime.js'

/** A job's service is taken down after two hours at the latest (spec, "Limits"). */
export const DEFAULT_SERVICE_LIFETIME_MS = 2 * 60 * 60 * 1000

const TIMEOUT_FAILURE: JobFailure = {code: 'timeout', message: 'The job reached its timeout and was stopped.'}
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
  gateway: Gateway
  /** The secrets service the node logs in to with `job`. */
  secretsUrl: string
  /** GPUs the node has: a job with a GPU operation fails at once on a node with none. */
  gpus: number
  serviceLifetimeMs?: number
  /** How long an exposed port may take to pass its health checks, and how often they run. */
  readyTimeoutMs?: number
  healthIntervalMs?: number
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
  op?: RunningOperation
  /** Its operations running now, by id: the node API's `/exec` and `/stats` reach them. */
  ops: Map<string, RunningOperation>
  /** The poster ended the job on chain: its run is gone and nothing can be recorded. */
  ended: boolean
  /** Its poster asked the node API to stop it: the node stops it and still records its result. */
  stopRequested: boolean
  /** What the node API streams of it. */
  feed: JobFeed
  /** Its exposed ports, for the node API's `/endpoints`. */
  endpoints: Map<string, Endpoint>
  timedOut: boolean
  /** Aborted when the job is ended or times out: resource downloads stop then. */
  abort: AbortController
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

  /** Stops the job it runs, as its poster asked through the node API; its result is still recorded. */
  stop(job: string): boolean {
    const active = this.current
    if (!active || active.address !== job || active.ended || active.timedOut) return false
    if (!active.stopRequested) {
      active.stopRequested = true
      active.feed.notice('info', 'Stopping the job, as its poster asked through the node API')
      this.log(`node: job ${active.address}: stop asked through the node API`)
      active.abort.abort()
      void active.op?.stop(5)
    }
    return true
  }

  /** The operations of the job it runs now, for the node API's `/exec` and `/stats`. */
  operations(job: string): ReadonlyMap<string, OperationAccess> | null {
    const active = this.current
    if (!active || active.address !== job || active.ended) return null
    const {runtime} = this.options
    const access = (op: RunningOperation): OperationAccess => ({
      exec: (cmd, options) => runtime.exec(op, cmd, options),
      sample: () => runtime.sample(op),
    })
    return new Map([...active.ops].map(([id, op]) => [id, access(op)]))
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

  /** Stops watching, leaves the node queue, and stops the running job's operation without recording a result. */
  async close(): Promise<void> {
    this.closed = true
    this.unsubscribe?.()
    await this.looking
    if (this.current) {
      this.current.ended = true
      this.current.abort.abort()
      clearTimeout(this.current.timeoutTimer)
      await this.current.op?.stop(5)
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
      timedOut: false,
      stopRequested: false,
      abort: new AbortController(),
      feed: this.feeds.open(address),
      endpoints: new Map(),
      ops: new Map(),
    }
    this.current = active
    active.feed.status('running', {node: this.address})
    active.feed.notice('info', `Node ${this.address} took the job`)
    this.log(`node: took job ${active.address}`)
    this.options.onChange?.()
    this.emit('taken', active.address)
    const account = await this.chain.job(job)
    if (account) this.armTimeout(active, Number(given.run.time + account.timeout) * 1000)
    this.running = this.runJob(active, account).finally(() => {
      clearTimeout(active.timeoutTimer)
      this.current = null
      this.options.onChange?.()
      this.emit('released', active.address)
      // The node is free: the next job, or the queue.
      this.look()
    })
  }

  /** Stops the job's operation once its paid time is over. */
  private armTimeout(active: ActiveJob, endsAtMs: number): void {
    active.timeoutTimer = setTimeout(
      () => {
        if (active.ended || active.timedOut) return
        active.timedOut = true
        active.feed.notice('info', 'The job reached its timeout; stopping it')
        this.log(`node: job ${active.address} reached its timeout; stopping it`)
        active.abort.abort()
        void active.op?.stop()
      },
      Math.max(0, endsAtMs - Date.now()),
    )
  }

  /** Notices a job its poster ended on chain (its run is gone) and stops its operation. */
  private async watch(active: ActiveJob): Promise<void> {
    if (active.ended || (await this.chain.run(active.run))) return
    if (this.current !== active || active.ended) return
    active.ended = true
    active.feed.notice('info', 'The job was ended on chain; stopping it')
    this.log(`node: job ${active.address} was ended on chain; stopping it`)
    this.options.gateway.remove(active.address)
    active.abort.abort()
    void active.op?.stop()
  }

  private async definition(job: JobAccount): Promise<{definition: JobDefinition} | {failure: JobFailure}> {
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
    if (runnable.ok) return {definition: runnable.definition}
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
      const loaded: {definition: JobDefinition} | {failure: JobFailure} = account
        ? await this.definition(account)
        : {failure: {code: 'job_missing', message: 'The job account is gone.'}}
      if ('failure' in loaded) result.fail(loaded.failure)
      else if (this.options.gpus === 0 && needsGpu(loaded.definition)) result.fail(NO_GPU_FAILURE)
      else await this.runOperations(active, loaded.definition, result)
    } catch (error) {
      // A download the timeout stopped fails the job for its timeout, not for the broken-off download.
      if (active.timedOut) result.fail(TIMEOUT_FAILURE)
      const code = error instanceof GpunetError ? error.code : 'node_error'
      result.fail({code, message: (error as Error).message})
    }
    this.options.gateway.remove(active.address)
    active.endpoints.clear()
    if (this.closed) return
    // Stopped through the node API: the run is still there, and `finish` records the output up to the stop.
    if (active.stopRequested) result.stop()
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

  private async runOperations(active: ActiveJob, definition: JobDefinition, result: ResultBuilder): Promise<void> {
    const secrets = findSecretReferences(definition).length > 0 ? await this.jobSecrets(active.address) : {}
    // All references are resolved before the first operation starts: a missing secret fails the job at once.
    const plans = substituteSecrets(planOperations(definition), secrets)
    // The port `job post` prints at the job's own URL: served there by every operation that exposes it.
    const jobPort = exposedPorts(definition)[0]
    const {feed} = active
    for (const plan of plans) {
      if (active.ended || active.timedOut || active.stopRequested) break
      if (plan.resources.length > 0) {
        feed.notice('info', `Operation ${plan.id}: loading its resources`)
        this.log(`node: job ${active.address}: operation ${plan.id} loading resources`)
      }
      // A failed download throws `resource_failed`, which fails the job before its operation starts.
      const resources = await loadResources(plan.resources, {
        ...this.options.resources,
        env: plan.env,
        signal: active.abort.signal,
      })
      try {
        feed.notice('info', `Operation ${plan.id}: starting ${plan.image}`)
        this.log(`node: job ${active.address}: operation ${plan.id} starting`)
        const onLine = (stream: 'stdout' | 'stderr', text: string, timestamp: number) =>
          feed.line(plan.id, stream, text.endsWith('\n') ? text.slice(0, -1) : text, timestamp)
        const options = {jobId: active.address, redact: secrets, mounts: resources.mounts, onLine}
        const op = await this.options.runtime.start(plan, options)
        active.op = op
        active.ops.set(plan.id, op)
        feed.opStarted(plan.id)
        // Ended, stopped or timed out while it was starting: nothing stopped it then.
        if (active.ended || active.timedOut || active.stopRequested)
          void op.stop(active.ended || active.stopRequested ? 5 : undefined)
        const service = op.ports[0] && this.serve(active, plan.id, op, result, jobPort)
        const outcome = await op.result
        active.ops.delete(plan.id)
        service?.end()
        active.op = undefined
        this.log(`node: job ${active.address}: operation ${plan.id} exited with ${outcome.exitCode}`)
        const jobStopped = active.ended || active.stopRequested
        const how = {acceptStop: service?.expired() ?? false, jobStopped, jobExpired: active.timedOut}
        const goOn = result.add(outcome, how)
        feed.notice('info', `Operation ${plan.id}: exited with code ${outcome.exitCode}`)
        // The status the result gives it, so `/job/<job>/info` and the recorded result never disagree.
        feed.opEnded(plan.id, outcome.exitCode, result.lastOpStatus as OpInfo['status'])
        if (!goOn) break
      } finally {
        await resources.cleanup()
      }
    }
    if (active.timedOut) result.fail(TIMEOUT_FAILURE)
  }

  /** The poster's secrets this job refers to, through a job-scoped login of the node. */
  private jobSecrets(job: string): Promise<Record<string, string>> {
    const wallet = walletFromBytes(this.options.keypair.secretKey, 'localnet node')
    return new SecretsClient({url: this.options.secretsUrl, wallet, job, cache: null}).list()
  }

  /**
   * Serves the operation's exposed ports through the gateway, each once its own health checks pass (`jobPort`,
   * or else the operation's first, at the job's URL; every one at its port's URL), and takes them down when the
   * operation ends or its lifetime is over (which stops the operation).
   */
  private serve(
    active: ActiveJob,
    opId: string,
    op: RunningOperation,
    result: ResultBuilder,
    jobPort: number | undefined,
  ) {
    const {gateway} = this.options
    const lifetimeMs = this.options.serviceLifetimeMs ?? DEFAULT_SERVICE_LIFETIME_MS
    const abort = new AbortController()
    let expired = false
    const ports = op.ports.map((p) => p.port)
    gateway.register(active.address, ports.includes(jobPort ?? -1) ? [jobPort!, ...ports] : ports)
    const lifetime = setTimeout(() => {
      expired = true
      gateway.remove(active.address)
      result.notice(`The service was taken down after its lifetime of ${Math.round(lifetimeMs / 1000)} s.`)
      void op.stop()
    }, lifetimeMs)
    const timing = {timeoutMs: this.options.readyTimeoutMs, intervalMs: this.options.healthIntervalMs}
    const endpoint = (port: number, status: Endpoint['status']) =>
      active.endpoints.set(portLabel(active.address, port), {
        opID: opId,
        port,
        url: gateway.jobUrl(active.address, port),
        status,
      })
    for (const port of op.ports) endpoint(port.port, 'OFFLINE')
    for (const port of op.ports) {
      void waitUntilReady(port, {...timing, signal: abort.signal}).then((readiness) => {
        if (abort.signal.aborted) return
        if (readiness.ready) {
          gateway.ready(active.address, port.port, port.hostPort)
          endpoint(port.port, 'ONLINE')
        }
        this.log(`node: job ${active.address}: port ${port.port} ${readiness.ready ? 'ready' : readiness.detail}`)
      })
    }
    return {
      expired: () => expired,
      end: () => {
        clearTimeout(lifetime)
        abort.abort()
        gateway.remove(active.address)
        for (const port of op.ports) endpoint(port.port, 'OFFLINE')
      },
    }
  }

  private log(line: string): void {
    this.options.log?.(line)
  }
}
