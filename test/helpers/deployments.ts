/** Driving a deployment manager in tests: its API with a wallet's headers, the chain's view of a vault's jobs. */
import {strict as assert} from 'node:assert'
import {type ChildProcessWithoutNullStreams, spawn} from 'node:child_process'
import {join} from 'node:path'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {Keypair, LAMPORTS_PER_SOL, type PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import {apiAuthHeaders} from '../../src/lib/deployments/auth-header.js'
import {CRASH_ENV, type CrashPoint} from '../../src/lib/deployments/crash-points.js'
import {marketNetwork, type MarketNetwork} from '../../src/lib/market/connect.js'
import {decodeJobAccount, JOB_ACCOUNT_DISCRIMINATOR, type JobAccount} from '../../src/lib/market/index.js'
import {localnetRewardsAccounts} from '../../src/lib/localnet/rewards.js'
import {resolveSettings} from '../../src/lib/settings/settings.js'
import {BIN} from './cli.js'
import {eventually} from './eventually.js'
import type {TestLocalnet} from './localnet.js'
import {sendInstructions, workInstruction} from './market.js'
import {call} from './secrets.js'

/** A definition the localnet takes: one long-running container. */
export const SERVICE_DEFINITION = {
  version: '0.1',
  type: 'container',
  ops: [{id: 'svc', type: 'container/run', args: {image: 'docker.io/library/alpine:3.20', cmd: ['sleep', '3600']}}],
}

/** The members the tests read of the API's objects (each route answers some of them). */
export interface Body {
  [member: string]: unknown
  id: string
  name: string
  vault: string
  owner: string
  status: string
  replicas: number
  time_scale: number
  active_jobs: number
  key: string
  transaction: string
  error: {code: string; message: string}
  deployments: Body[]
  pagination: {cursor_next: string | null; cursor_prev: string | null; total_items: number}
}

/** A task, a job row and an event as the API shows them. */
export interface TaskJson {
  id: number
  task: string
  status: string
  attempts: number
  job?: string
  tx?: string
}
export interface JobJson {
  job: string
  tx?: string
  market: string
  state: string
  time_start: number
}
export interface EventJson {
  type: string
  message: string
  tx?: string
  created_at: string
}

/** Calls the manager as `owner` (its wallet headers); `headers: {}` sends none. */
export async function api<T = Body>(
  url: string,
  owner: Keypair | null,
  method: string,
  path: string,
  params?: Record<string, unknown>,
): Promise<{status: number; body: T}> {
  const headers = owner ? apiAuthHeaders(owner) : {}
  const answer = await call(url, method, path, {params, headers})
  return {status: answer.status, body: answer.body as T}
}

/** A deployment's jobs, oldest first: the first page of 100 (the API answers `{jobs, pagination}`). */
export async function deploymentJobs(url: string, owner: Keypair, id: string): Promise<JobJson[]> {
  const page = await api<{jobs: JobJson[]}>(url, owner, 'GET', `/api/deployments/${id}/jobs?limit=100&sort_order=asc`)
  assert.equal(page.status, 200, JSON.stringify(page.body))
  return page.body.jobs
}

/** A deployment's events, oldest first: the first page of 100 (the API answers `{events, pagination}`). */
export async function deploymentEvents(url: string, owner: Keypair, id: string): Promise<EventJson[]> {
  const page = await api<{events: EventJson[]}>(
    url,
    owner,
    'GET',
    `/api/deployments/${id}/events?limit=100&sort_order=asc`,
  )
  assert.equal(page.status, 200, JSON.stringify(page.body))
  return page.body.events
}

/** A deployment's tasks, oldest first: the first page of 100 (the API answers `{tasks, pagination}`). */
export async function deploymentTasks(url: string, owner: Keypair, id: string): Promise<TaskJson[]> {
  const page = await api<{tasks: TaskJson[]}>(
    url,
    owner,
    'GET',
    `/api/deployments/${id}/tasks?limit=100&sort_order=asc`,
  )
  assert.equal(page.status, 200, JSON.stringify(page.body))
  return page.body.tasks
}

/** Creates a deployment and answers its object; fails the test otherwise. */
export async function createDeployment(url: string, owner: Keypair, body: Record<string, unknown>): Promise<Body> {
  // A vault of its own unless the test names one or asks for the shared one (new_vault: false): the deployments of
  // one test wallet then do not pay from, or fund, each other's vault.
  const vault = 'vault' in body || 'new_vault' in body ? {} : {new_vault: true}
  const created = await api(url, owner, 'POST', '/api/deployments/create', {
    name: 'svc',
    replicas: 1,
    timeout: 10,
    strategy: 'SIMPLE-EXTEND',
    job_definition: SERVICE_DEFINITION,
    ...vault,
    ...body,
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  return created.body
}

/** Every job account on the chain paid from `payer`, by address. */
export async function jobsPaidBy(t: TestLocalnet, payer: PublicKey): Promise<Map<string, JobAccount>> {
  const accounts = await t.connection.getProgramAccounts(t.programId, {
    filters: [{memcmp: {offset: 0, bytes: bs58.encode(JOB_ACCOUNT_DISCRIMINATOR)}}],
  })
  const jobs = new Map<string, JobAccount>()
  for (const {pubkey, account} of accounts) {
    const job = decodeJobAccount(account.data)
    if (job.payer.equals(payer)) jobs.set(pubkey.toBase58(), job)
  }
  return jobs
}

/** A node (funded, staked) that takes the next queued job of the market, as the network's nodes do with `work`. */
export async function nodeTakesNextJob(t: TestLocalnet): Promise<Keypair> {
  const node = Keypair.generate()
  t.ln.node.fund(node.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL), tokens: 1n})
  const run = Keypair.generate()
  const worked = await sendInstructions(t, [workInstruction(t, node.publicKey, run.publicKey)], [node, run])
  assert.equal(worked.error, undefined, JSON.stringify(worked.error))
  return node
}

/** The SOL (lamports) and tokens (base units) of an address. */
export async function holdings(t: TestLocalnet, owner: PublicKey): Promise<{lamports: bigint; tokens: bigint}> {
  const lamports = BigInt(await t.connection.getBalance(owner, 'confirmed'))
  const ata = getAssociatedTokenAddressSync(t.mint, owner, true)
  const info = await t.connection.getTokenAccountBalance(ata, 'confirmed').catch(() => null)
  return {lamports, tokens: info ? BigInt(info.value.amount) : 0n}
}

/** Waits until the deployment's tasks satisfy `done`; answers them. */
export async function tasksWhen(
  url: string,
  owner: Keypair,
  id: string,
  done: (tasks: TaskJson[]) => boolean,
  ms = 30_000,
): Promise<TaskJson[]> {
  return eventually(`the tasks of ${id}`, ms, async () => {
    const tasks = await deploymentTasks(url, owner, id)
    return done(tasks) ? tasks : undefined
  })
}

/** Waits until the deployment has `status`; answers its object. */
export async function statusWhen(url: string, owner: Keypair, id: string, status: string, ms = 30_000): Promise<Body> {
  return eventually(`deployment ${id} ${status}`, ms, async () => {
    const {body} = await api(url, owner, 'GET', `/api/deployments/${id}`)
    return body?.status === status ? body : undefined
  })
}

/** A `gpunet deployment serve` child process, its URL and what it wrote to stderr so far. */
export interface ServeProcess {
  child: ChildProcessWithoutNullStreams
  url: string
  /** The JSON document it printed once listening (its `stableUrls`, `gatewayPort`...). */
  document: {url: string; stableUrls: string; gatewayPort: number}
  stderr: () => string
}

/** Waits until a `gpunet deployment serve` child prints its JSON document (it listens then); rejects if it exits first. */
export async function serving(child: ChildProcessWithoutNullStreams): Promise<ServeProcess> {
  let stdout = ''
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const document = await new Promise<ServeProcess['document']>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
      try {
        resolve(JSON.parse(stdout) as ServeProcess['document'])
      } catch {
        // not the whole document yet
      }
    })
    child.on('exit', (code) => reject(new Error(`serve exited ${code} before listening: ${stderr}`)))
  })
  return {child, url: document.url, document, stderr: () => stderr}
}

/**
 * Spawns `gpunet deployment serve` on the localnet `t` with its data in `dataDir` and its config and data homes under
 * `home`, killed at `crashAt` when given; `env` adds settings (a database URL, a vault key file).
 */
export function spawnServe(
  t: TestLocalnet,
  home: string,
  dataDir: string,
  crashAt?: CrashPoint,
  env: NodeJS.ProcessEnv = {},
): ChildProcessWithoutNullStreams {
  return spawn(
    process.execPath,
    [BIN, 'deployment', 'serve', '--network', 'localnet', '--port', '0', '--data-dir', dataDir, '--json'],
    {
      env: {
        ...process.env,
        NO_COLOR: '1',
        GPUNET_LOCALNET_DIR: t.dataDir,
        XDG_CONFIG_HOME: join(home, 'config'),
        XDG_DATA_HOME: join(home, 'data'),
        [CRASH_ENV]: crashAt ?? '',
        ...env,
      },
    },
  )
}

/**
 * The localnet `t` as a client reaches it (no config file read; `env` adds settings), for managers a test starts;
 * `withGateway` adds its node gateway (the replicas' service URLs and the nodes' APIs, as `deployment serve` has them).
 */
export function localnetClient(t: TestLocalnet, env: NodeJS.ProcessEnv = {}, withGateway = false): MarketNetwork {
  return marketNetwork(
    resolveSettings({network: 'localnet', env: {XDG_CONFIG_HOME: '/nonexistent-gpunet-config', ...env}}),
    {
      rpcUrl: t.ln.runtime.rpcUrl,
      contentStoreUrl: t.ln.runtime.rpcUrl,
      gatewayUrl: withGateway ? t.ln.runtime.gatewayUrl : null,
      programId: t.programId,
      mint: t.mint,
      market: t.market,
      node: null,
      rewards: localnetRewardsAccounts(t.mint),
    },
  )
}
