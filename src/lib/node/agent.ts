/**
 * The localnet's node agent: it takes queued jobs of the default market with `work`, as a remote node does,
 * runs their operations in order, serves their exposed ports through the gateway, and records each result with
 * `finish`. It runs one job at a time and never takes a job whose operations need a GPU it lacks.
 */
import type {Keypair, PublicKey} from '@solana/web3.js'

import {findSecretReferences} from '../definition/secret-refs.js'
import type {JobDefinition} from '../definition/schema.js'
import {validateJobDefinition} from '../definition/validate.js'
import {GpunetError} from '../errors.js'
import type {Localnet} from '../localnet/node.js'
import type {JobAccount} from '../market/accounts.js'
import {bytesToIpfsHash} from '../market/ipfs-hash.js'
import {exposedPorts} from '../market/service-url.js'
import {SecretsClient} from '../secrets/client.js'
import {walletFromBytes} from '../wallet.js'
import {NodeChainClient} from './chain-client.js'
import type {Gateway} from './gateway.js'
import {waitUntilReady} from './health.js'
import {needsGpu, planOperations, substituteSecrets} from './operation-plan.js'
import {loadResources, type ResourceOptions} from './resources.js'
import {type JobFailure, ResultBuilder} from './results.js'
import type {ContainerRuntime, RunningOperation} from './runtime/runtime.js'

/** A job's service is taken down after two hours at the latest (spec, "Limits"). */
export const DEFAULT_SERVICE_LIFETIME_MS = 2 * 60 * 60 * 1000

const TIMEOUT_FAILURE: JobFailure = {code: 'timeout', message: 'The job reached its timeout and was stopped.'}

/** SOL (lamports) below which the agent tops up its fee balance from the faucet. */
const MIN_FEE_LAMPORTS = 100_000_000n

/** Settings of a node agent. */
export interface NodeAgentOptions {
  localnet: Localnet
  keypair: Keypair
  runtime: ContainerRuntime
  gateway: Gateway
  /** The secrets service the node logs in to with `job`. */
  secretsUrl: string
  /** GPUs the node has: jobs with a GPU operation are left alone when it has none. */
  gpus: number
  /** How often it looks at the market queue and at its running job. */
  pollMs?: number
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
  /** The poster ended the job on chain: its run is gone and nothing can be recorded. */
  ended: boolean
  timedOut: boolean
  /** Aborted when the job is ended or times out: resource downloads stop then. */
  abort: AbortController
}

/** A node taking and running jobs of the localnet's default market. */
export class NodeAgent {
  readonly chain: NodeChainClient
  private current: ActiveJob | null = null
  private running: Promise<void> | null = null
  private timer: NodeJS.Timeout | undefined
  private closed = false
  /** Jobs left alone because they need a GPU, logged once each. */
  private readonly declined = new Set<string>()

  constructor(private readonly options: NodeAgentOptions) {
    this.chain = new NodeChainClient(options.localnet, options.keypair)
  }

  /** The jobs the node runs now (one at most). */
  get runningJobs(): string[] {
    return this.current ? [this.current.address] : []
  }

  /** Funds the node when needed, closes the jobs a previous run left behind, and starts watching the market. */
  start(): void {
    this.chain.prepare(MIN_FEE_LAMPORTS)
    // A localnet stopped while its node ran a job leaves the job running on chain; the container is gone, so
    // the node fails it with a result, which refunds the poster the unused time.
    for (const {address: run, run: account} of this.chain.ownRuns()) {
      const result = new ResultBuilder(account.job.toBase58(), this.chain.address.toBase58())
      result.fail({code: 'interrupted', message: 'The localnet stopped while the job ran; it was not resumed.'})
      this.record(account.job, run, result)
    }
    this.schedule()
  }

  /** Stops watching, and stops the running job's operation without recording a result. */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    if (this.current) {
      this.current.ended = true
      this.current.abort.abort()
      await this.current.op?.stop(5)
    }
    await this.running
  }

  private schedule(): void {
    if (this.closed) return
    this.timer = setTimeout(() => {
      try {
        if (this.current) this.watch(this.current)
        else this.takeNext()
      } catch (error) {
        this.log(`node: ${(error as Error).message}`)
      }
      this.schedule()
    }, this.options.pollMs ?? 1000)
  }

  /** Takes the head of the queue with `work` when the node can run it; stays out of the queue otherwise. */
  private takeNext(): void {
    const head = this.chain.queueHead()
    if (!head) return
    const address = head.address.toBase58()
    const loaded = this.definition(head.job)
    // Entering the queue would let `list` hand the node any job, GPU jobs included: it calls `work` only when
    // the head job is one it can run, which takes exactly that job.
    if ('definition' in loaded && this.options.gpus === 0 && needsGpu(loaded.definition)) {
      if (!this.declined.has(address)) this.log(`node: job ${address} needs a GPU and this node has none; not taken`)
      this.declined.add(address)
      return
    }
    this.chain.prepare(MIN_FEE_LAMPORTS)
    const run = this.chain.work()
    const job = this.chain.run(run)!.job
    const active: ActiveJob = {
      job,
      run,
      address: job.toBase58(),
      ended: false,
      timedOut: false,
      abort: new AbortController(),
    }
    this.current = active
    this.log(`node: took job ${active.address}`)
    this.options.onChange?.()
    // The head was read just before `work` in the same turn of the event loop, so it is the job `work` took.
    this.running = this.runJob(active, loaded).finally(() => {
      this.current = null
      this.options.onChange?.()
    })
  }

  /** Notices a job its poster ended on chain, or one past its paid time, and stops its operation. */
  private watch(active: ActiveJob): void {
    const run = this.chain.run(active.run)
    if (!run) {
      if (active.ended) return
      active.ended = true
      this.log(`node: job ${active.address} was ended on chain; stopping it`)
      this.options.gateway.remove(active.address)
      active.abort.abort()
      void active.op?.stop()
      return
    }
    const job = this.chain.job(active.job)
    if (job && !active.timedOut && Date.now() / 1000 > Number(run.time + job.timeout)) {
      active.timedOut = true
      this.log(`node: job ${active.address} reached its timeout; stopping it`)
      active.abort.abort()
      void active.op?.stop()
    }
  }

  private definition(job: JobAccount): {definition: JobDefinition} | {failure: JobFailure} {
    const cid = bytesToIpfsHash(job.ipfsJob)
    const bytes = this.options.localnet.content.get(cid)
    if (!bytes)
      return {failure: {code: 'definition_missing', message: `The content store does not hold the definition ${cid}.`}}
    let value: unknown
    try {
      value = JSON.parse(bytes.toString('utf8'))
    } catch {
      return {failure: {code: 'definition_invalid', message: `The definition ${cid} is not JSON.`}}
    }
    const checked = validateJobDefinition(value)
    if (checked.success) return {definition: checked.data}
    const issues = checked.errors.map((e) => `${e.path || '(document)'}: ${e.message}`)
    return {failure: {code: 'definition_invalid', message: `The definition ${cid} is not valid: ${issues.join('; ')}`}}
  }

  private async runJob(active: ActiveJob, loaded: {definition: JobDefinition} | {failure: JobFailure}): Promise<void> {
    const result = new ResultBuilder(active.address, this.chain.address.toBase58())
    try {
      if ('failure' in loaded) result.fail(loaded.failure)
      else await this.runOperations(active, loaded.definition, result)
    } catch (error) {
      // A download the timeout stopped fails the job for its timeout, not for the broken-off download.
      if (active.timedOut) result.fail(TIMEOUT_FAILURE)
      const code = error instanceof GpunetError ? error.code : 'node_error'
      result.fail({code, message: (error as Error).message})
    }
    this.options.gateway.remove(active.address)
    if (!active.ended) this.record(active.job, active.run, result)
  }

  /** Uploads the result to the content store and records it with `finish`. */
  private record(job: PublicKey, run: PublicKey, result: ResultBuilder): void {
    const document = result.build()
    const {cid} = this.options.localnet.content.add(Buffer.from(`${JSON.stringify(document, null, 2)}\n`))
    try {
      this.chain.finish(job, run, cid)
      this.log(`node: job ${document.job} ${document.status}; result ${cid}`)
    } catch (error) {
      this.log(`node: could not record the result of job ${document.job}: ${(error as Error).message}`)
    }
  }

  private async runOperations(active: ActiveJob, definition: JobDefinition, result: ResultBuilder): Promise<void> {
    const secrets = findSecretReferences(definition).length > 0 ? await this.jobSecrets(active.address) : {}
    // All references are resolved before the first operation starts: a missing secret fails the job at once.
    const plans = substituteSecrets(planOperations(definition), secrets)
    // The port `job post` prints at the job's own URL: served there by every operation that exposes it.
    const jobPort = exposedPorts(definition)[0]
    for (const plan of plans) {
      if (active.ended || active.timedOut) break
      if (plan.resources.length > 0) this.log(`node: job ${active.address}: operation ${plan.id} loading resources`)
      // A failed download throws `resource_failed`, which fails the job before its operation starts.
      const resources = await loadResources(plan.resources, {
        ...this.options.resources,
        env: plan.env,
        signal: active.abort.signal,
      })
      try {
        this.log(`node: job ${active.address}: operation ${plan.id} starting`)
        const options = {jobId: active.address, redact: secrets, mounts: resources.mounts}
        const op = await this.options.runtime.start(plan, options)
        active.op = op
        // Ended or timed out while it was starting: nothing stopped it then.
        if (active.ended || active.timedOut) void op.stop(active.ended ? 5 : undefined)
        const service = op.ports[0] && this.serve(active, op, result, jobPort)
        const outcome = await op.result
        service?.end()
        active.op = undefined
        this.log(`node: job ${active.address}: operation ${plan.id} exited with ${outcome.exitCode}`)
        if (!result.add(outcome, {acceptStop: service?.expired() ?? false})) break
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
  private serve(active: ActiveJob, op: RunningOperation, result: ResultBuilder, jobPort: number | undefined) {
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
    for (const port of op.ports) {
      void waitUntilReady(port, {...timing, signal: abort.signal}).then((readiness) => {
        if (abort.signal.aborted) return
        if (readiness.ready) gateway.ready(active.address, port.port, port.hostPort)
        this.log(`node: job ${active.address}: port ${port.port} ${readiness.ready ? 'ready' : readiness.detail}`)
      })
    }
    return {
      expired: () => expired,
      end: () => {
        clearTimeout(lifetime)
        abort.abort()
        gateway.remove(active.address)
      },
    }
  }

  private log(line: string): void {
    this.options.log?.(line)
  }
}
