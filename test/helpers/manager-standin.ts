/**
 * The deployment manager without a chain, for tests that drive its worker's passes (tick) on a clock of their own:
 * a SQLite store, a stand-in chain the test moves (a node takes a queued job, a job ends, a vault is funded) read
 * through the real chain view (refreshJobs decodes the accounts it answers), and task runners that do on it what
 * paying.ts's do on a real one. The manager's decisions (rollout, strategies, failures and retries) are the real ones.
 */
import {randomBytes} from 'node:crypto'

import {type AccountInfo, Keypair, PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import type {ManagerContext} from '../../src/lib/deployments/context.js'
import {Draining} from '../../src/lib/deployments/draining.js'
import {jobTimeoutSeconds} from '../../src/lib/deployments/strategies/durations.js'
import type {DeploymentStore} from '../../src/lib/deployments/store/store.js'
import type {DeploymentRow, EventRow, JobRow, TaskKind} from '../../src/lib/deployments/types.js'
import {vaultSeal} from '../../src/lib/deployments/paying/vault-seal.js'
import {POLL_MS, taskRunner, tick, type TaskRunner} from '../../src/lib/deployments/manager/worker.js'
import {GpunetError} from '../../src/lib/errors.js'
import {generateKeypair} from '../../src/lib/keys/wallet.js'
import type {MarketNetwork} from '../../src/lib/market/connect.js'
import {encodeJobAccount, encodeRunAccount, JobState} from '../../src/lib/market/codec/accounts.js'

/** 2027-01-15: any fixed instant, so every deadline is decided by the test's clock alone. */
export const T0 = 1_800_000_000_000

/** The container the tests' deployments run (revision 1). */
export const SERVICE = {
  version: '0.1',
  type: 'container',
  ops: [{id: 'svc', type: 'container/run', args: {image: 'docker.io/library/alpine:3.20', cmd: ['sleep', '3600']}}],
}

/** SERVICE with another command, or exposing a port: a new revision. */
export function revised(args: Record<string, unknown>) {
  return {...SERVICE, ops: [{...SERVICE.ops[0]!, args: {...SERVICE.ops[0]!.args, ...args}}]}
}

/** A job on the stand-in chain. */
interface ChainJob {
  address: PublicKey
  /** The run account its `list` named, created when a node takes it. */
  run: PublicKey
  payer: PublicKey
  state: number
  node: PublicKey | null
  /** s */
  runTime: bigint
  timeStart: bigint
  timeEnd: bigint
  timeout: bigint
}

/** The chain as the manager reads it: job and run accounts (answered encoded as the program lays them out). */
export class StandinChain {
  readonly programId = Keypair.generate().publicKey
  /** Token base units per second of a job (the localnet market's price). */
  readonly price = 100n
  /** What each vault holds, in token base units: a listing or an extension is refused past it. */
  readonly tokens = new Map<string, bigint>()
  private readonly jobs = new Map<string, ChainJob>()

  constructor(private readonly clock: () => number) {}

  private seconds(): bigint {
    return BigInt(Math.floor(this.clock() / 1000))
  }

  /** The account of `address`, as getAccountInfo answers it. */
  private account(address: PublicKey): AccountInfo<Buffer> | null {
    const key = address.toBase58()
    const job = this.jobs.get(key)
    if (job) return this.info(this.jobAccount(job))
    const running = [...this.jobs.values()].find((j) => j.node && j.run.toBase58() === key && j.state === 0)
    return running ? this.info(this.runAccount(running)) : null
  }

  private info(data: Buffer): AccountInfo<Buffer> {
    return {owner: this.programId, data, lamports: 1, executable: false, rentEpoch: 0}
  }

  private jobAccount(j: ChainJob): Buffer {
    return encodeJobAccount({
      ipfsJob: new Uint8Array(32),
      ipfsResult: new Uint8Array(32),
      market: PublicKey.default,
      node: j.node ?? PublicKey.default,
      payer: j.payer,
      price: this.price,
      project: j.payer,
      state: j.state,
      timeEnd: j.timeEnd,
      timeStart: j.timeStart,
      timeout: j.timeout,
    })
  }

  private runAccount(j: ChainJob): Buffer {
    return encodeRunAccount({job: j.address, node: j.node!, payer: j.payer, state: 0, time: j.runTime})
  }

  /** What refreshJobs, the rollout and the runners call of a web3.js Connection. */
  readonly connection = {
    rpcEndpoint: 'http://standin.invalid',
    getAccountInfo: async (address: PublicKey) => this.account(address),
    getMultipleAccountsInfo: async (addresses: PublicKey[]) => addresses.map((a) => this.account(a)),
    getProgramAccounts: async (_program: PublicKey, config: {filters: {memcmp: {offset: number; bytes: string}}[]}) => {
      const job = config.filters.find((f) => f.memcmp.offset === 8)?.memcmp.bytes
      const found = job ? this.jobs.get(job) : undefined
      return found?.node && found.state === 0 ? [{pubkey: found.run, account: this.info(this.runAccount(found))}] : []
    },
  }

  /** Lists a job paid from `vault` for `timeout` s; refused (insufficient_balance) when the vault cannot pay it. */
  list(vault: string, timeout: number): ChainJob {
    this.pay(vault, BigInt(timeout))
    const job: ChainJob = {
      address: Keypair.generate().publicKey,
      run: Keypair.generate().publicKey,
      payer: new PublicKey(vault),
      state: JobState.QUEUED,
      node: null,
      runTime: 0n,
      timeStart: 0n,
      timeEnd: 0n,
      timeout: BigInt(timeout),
    }
    this.jobs.set(job.address.toBase58(), job)
    return job
  }

  /** Extends a job by `seconds`, paid from its vault; answers its timeout before and after. */
  extend(address: string, seconds: number): {before: number; after: number} {
    const job = this.jobs.get(address)!
    this.pay(job.payer.toBase58(), BigInt(seconds))
    const before = Number(job.timeout)
    job.timeout += BigInt(seconds)
    return {before, after: Number(job.timeout)}
  }

  private pay(vault: string, seconds: bigint) {
    const held = this.tokens.get(vault) ?? 0n
    const cost = this.price * seconds
    if (held < cost)
      throw new GpunetError('insufficient_balance', `the vault ${vault} holds ${held} token base units, not ${cost}`)
    this.tokens.set(vault, held - cost)
  }

  /** Adds tokens to a vault. */
  fund(vault: string, tokens: bigint): void {
    this.tokens.set(vault, (this.tokens.get(vault) ?? 0n) + tokens)
  }

  /** A node takes the oldest queued job (as `work` does); answers it, or undefined when none is queued. */
  take(node = Keypair.generate().publicKey): string | undefined {
    const job = [...this.jobs.values()].find((j) => j.state === JobState.QUEUED && !j.node)
    if (!job) return undefined
    job.node = node
    job.runTime = this.seconds()
    return job.address.toBase58()
  }

  /** The job's node finishes it (its command ended): COMPLETED. */
  finish(address: string): void {
    const job = this.jobs.get(address)!
    job.state = JobState.DONE
    job.timeStart = job.runTime
    job.timeEnd = this.seconds()
  }

  /** The poster stops it: a queued job is delisted (its account closed), a running one ended (COMPLETED). */
  stop(address: string): void {
    const job = this.jobs.get(address)!
    if (!job.node) this.jobs.delete(address)
    else this.finish(address)
  }

  /** The node the job runs on, if one took it. */
  nodeOf(address: string): PublicKey | null {
    return this.jobs.get(address)?.node ?? null
  }

  /** The job's timeout on chain (s). */
  timeoutOf(address: string): number {
    return Number(this.jobs.get(address)!.timeout)
  }
}

/** The task runners of paying.ts, done on the stand-in chain: they record what the real ones record. */
export function standinRunners(chain: StandinChain): Record<TaskKind, TaskRunner> {
  const tx = () => bs58.encode(randomBytes(64))
  return {
    async LIST(ctx, deployment, task) {
      const job = chain.list(deployment.vault, jobTimeoutSeconds(deployment))
      const now = ctx.now()
      const signature = tx()
      const row: JobRow = {
        job: job.address.toBase58(),
        deployment: deployment.id,
        tx: signature,
        market: deployment.market,
        revision: task.revision,
        run: job.run.toBase58(),
        state: 'QUEUED',
        time_start: 0,
        chain_timeout: jobTimeoutSeconds(deployment),
        stop_requested: false,
        created_at: now,
        updated_at: now,
      }
      await ctx.store.recordListed(task, row, signature, now)
      await ctx.store.addEvent(
        {
          deployment: deployment.id,
          category: 'Event',
          type: 'JOB_LIST_CONFIRMED',
          message: `job ${row.job} listed`,
          tx: signature,
        },
        now,
      )
    },
    async EXTEND(ctx, deployment, task) {
      // A one-shot extension (the extend rule) adds its own seconds, as paying.ts's runExtend.
      const {before, after} = chain.extend(task.job!, task.limit ?? jobTimeoutSeconds(deployment))
      const now = ctx.now()
      const signature = tx()
      await ctx.store.updateJob(task.job!, {chain_timeout: after}, now)
      await ctx.store.updateTask(task.id, {status: 'DONE', tx: signature, error: null}, now)
      await ctx.store.addEvent(
        {
          deployment: deployment.id,
          category: 'Event',
          type: 'JOB_EXTEND_SUCCESSFUL',
          message: `job ${task.job} extended from ${before} s to ${after} s`,
          tx: signature,
        },
        now,
      )
    },
    async STOP(ctx, deployment, task) {
      chain.stop(task.job!)
      const now = ctx.now()
      const signature = tx()
      await ctx.store.updateTask(task.id, {status: 'DONE', tx: signature, error: null}, now)
      await ctx.store.addEvent(
        {
          deployment: deployment.id,
          category: 'Event',
          type: 'JOB_STOPPED_CONFIRMED',
          message: `job ${task.job} stopped`,
          tx: signature,
        },
        now,
      )
    },
  }
}

/** A manager on `store` and a stand-in chain, at a clock the test moves; `nodeApi` is where its nodes' APIs are. */
export interface StandinManager {
  ctx: ManagerContext
  chain: StandinChain
  /** ms, as ctx.now() reads it. */
  clock: number
  /** Moves the clock by `ms`. */
  advance(ms: number): void
  /** One pass of the worker (its real planning, rollout and task handling, over the stand-in runners). */
  pass(): Promise<void>
  /** `count` passes, the clock moved by the worker's poll at `timeScale` before each. */
  polls(count: number, timeScale: number): Promise<void>
  /**
   * Creates a deployment of `definition` (revision 1; SERVICE unless told), its vault holding `tokens`, and starts it
   * (STARTING, as a start with the deposit does).
   */
  start(change: Partial<DeploymentRow>, tokens?: bigint, definition?: unknown): Promise<DeploymentRow>
  deployment(id: string): Promise<DeploymentRow>
  jobs(id: string): Promise<JobRow[]>
  events(id: string): Promise<EventRow[]>
}

export function standinManager(store: DeploymentStore, nodeApi?: string): StandinManager {
  const manager: StandinManager = {
    clock: T0,
    advance(ms) {
      manager.clock += ms
    },
    chain: new StandinChain(() => manager.clock),
    ctx: undefined as unknown as ManagerContext,
    pass: async () => void (await tick(manager.ctx, run)),
    async polls(count, timeScale) {
      for (let i = 0; i < count; i++) {
        manager.advance(POLL_MS / timeScale)
        await manager.pass()
      }
    },
    async start(change, tokens = 10_000_000n, definition = SERVICE) {
      const vault = generateKeypair()
      const now = manager.clock
      const row: DeploymentRow = {
        id: bs58.encode(randomBytes(16)),
        name: 'svc',
        owner: 'owner',
        vault: vault.publicKey.toBase58(),
        market: PublicKey.default.toBase58(),
        status: 'STARTING',
        replicas: 1,
        timeout: 10,
        strategy: 'SIMPLE',
        time_scale: 1,
        confidential: false,
        active_revision: 1,
        started_at: now,
        throttle_rounds: 0,
        created_at: now,
        updated_at: now,
        ...change,
      }
      await store.createDeployment(
        row,
        {
          deployment: row.id,
          revision: 1,
          ipfs_definition_hash: 'Qm1',
          job_definition: JSON.stringify(definition),
          created_at: now,
        },
        {vault: row.vault, owner: row.owner, sealed: manager.ctx.seal.seal(vault), created_at: now},
      )
      manager.chain.fund(row.vault, tokens)
      return row
    },
    deployment: async (id) => (await store.deployment(id))!,
    jobs: (id) => store.jobs(id),
    events: (id) => store.events(id),
  }
  const run = taskRunner(standinRunners(manager.chain))
  const net = {
    name: 'localnet',
    connection: manager.chain.connection,
    programId: manager.chain.programId,
    defaultMarket: PublicKey.default,
    networkHost: null,
    gatewayUrl: null,
    nodeApiUrl: (node: string) => (nodeApi ? `${nodeApi}/${node}` : null),
    // A revision's definition is uploaded; nothing here reads it back.
    content: () => ({add: async () => {}}),
  } as unknown as MarketNetwork
  manager.ctx = {
    store,
    net,
    network: 'localnet',
    seal: vaultSeal(randomBytes(32)),
    now: () => manager.clock,
    log: () => {},
    env: {},
    draining: new Draining(),
  }
  return manager
}
