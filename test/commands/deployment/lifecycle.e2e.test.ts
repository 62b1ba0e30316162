/**
 * `gpunet deployment` end to end through the built CLI, against the localnet's own deployment manager and chain
 * (its node running jobs as host processes): create -> fund -> start -> jobs -> events as JSON lines -> the refusals
 * of a running deployment -> stop -> withdraw to the last base unit -> delete; a start the vault cannot pay (exit 4);
 * API keys;
 * `--json` checked against the members of the network's Deployment, Job and Event types (@nosana/api).
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import type {DeploymentEvents, DeploymentJobs, DeploymentState} from '@nosana/api'
import {Connection, PublicKey} from '@solana/web3.js'
import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {z} from 'zod'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {eventually} from '../../helpers/eventually.js'

// The network's own client types (@nosana/api 2.1.8, which @nosana/kit carries): its Deployment, Job and Event.
type NetworkDeployment = DeploymentState
type NetworkJob = DeploymentJobs['jobs'][number]
type NetworkEvent = DeploymentEvents['events'][number]

/** Every member of the network's Deployment type; one it gains or loses fails tsc here (`complete` below). */
const DEPLOYMENT_MEMBERS = [
  'id',
  'name',
  'vault',
  'market',
  'owner',
  'status',
  'replicas',
  'timeout',
  'endpoints',
  'confidential',
  'active_revision',
  'active_jobs',
  'created_at',
  'updated_at',
  'strategy',
] as const satisfies readonly (keyof NetworkDeployment)[]
const complete: [Exclude<keyof NetworkDeployment, (typeof DEPLOYMENT_MEMBERS)[number]>] extends [never] ? true : false =
  true
const JOB_MEMBERS = [
  'tx',
  'job',
  'deployment',
  'market',
  'revision',
  'state',
  'time_start',
  'created_at',
] as const satisfies readonly (keyof NetworkJob)[]
const EVENT_MEMBERS = [
  'category',
  'deploymentId',
  'type',
  'message',
  'created_at',
] as const satisfies readonly (keyof NetworkEvent)[]

const address = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
const iso = z.iso.datetime()
/** The network's Deployment with its types, and gpunet's members after it. */
const deploymentJson = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  vault: address,
  market: address,
  owner: address,
  status: z.enum(['DRAFT', 'ERROR', 'STARTING', 'RUNNING', 'STOPPING', 'STOPPED', 'INSUFFICIENT_FUNDS', 'ARCHIVED']),
  replicas: z.number().int(),
  timeout: z.number(),
  endpoints: z.array(z.looseObject({opId: z.string(), port: z.union([z.number(), z.string()]), url: z.string()})),
  confidential: z.boolean(),
  active_revision: z.number(),
  active_jobs: z.number(),
  created_at: iso,
  updated_at: iso,
  strategy: z.enum(['SIMPLE', 'SIMPLE-EXTEND']),
  network: z.literal('localnet'),
  manager: z.string().startsWith('http://127.0.0.1:'),
})
type DeploymentJson = z.infer<typeof deploymentJson>

describe('gpunet deployment on the localnet (end to end)', function () {
  this.timeout(300_000)
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  let connection: Connection
  let mint: PublicKey
  let owner: string

  const cli = (args: string[]) => runCli(args, {env, cwd: box.dir})
  const json = async <T = unknown>(args: string[], code = 0): Promise<T> => {
    const result = await cli([...args, '--json'])
    assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}${result.stdout}`)
    return JSON.parse(result.stdout) as T
  }
  const deployment = async (args: string[]): Promise<DeploymentJson> => {
    const document = await json(args)
    const parsed = deploymentJson.safeParse(document)
    assert.ok(parsed.success, `${args.join(' ')}: ${parsed.success ? '' : z.prettifyError(parsed.error)}`)
    for (const member of DEPLOYMENT_MEMBERS)
      assert.ok(member in (document as object), `${args.join(' ')}: no ${member}`)
    return parsed.data
  }
  const balances = async (who: PublicKey) => {
    const [account, tokens] = await connection.getMultipleAccountsInfo([
      who,
      getAssociatedTokenAddressSync(mint, who, true),
    ])
    return {
      lamports: BigInt(account?.lamports ?? 0),
      tokens: tokens ? tokens.data.readBigUInt64LE(64) : 0n,
      tokenAccount: tokens !== null,
    }
  }

  before(async function () {
    this.timeout(120_000)
    assert.ok(complete)
    box = cliSandbox()
    env = {...box.env, GPUNET_GATEWAY_PORT: '0'}
    const started = await cli(['localnet', 'start', '--detach', '--runtime', 'host', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const status = JSON.parse(started.stdout) as {rpcUrl: string; mint: string; deploymentManager: string | null}
    assert.ok(status.deploymentManager, 'the localnet runs a deployment manager')
    connection = new Connection(status.rpcUrl, 'confirmed')
    mint = new PublicKey(status.mint)
    owner = (JSON.parse((await cli(['wallet', 'address', '--json'])).stdout) as {address: string}).address
    writeFileSync(
      join(box.dir, 'svc.json'),
      JSON.stringify({
        version: '0.1',
        type: 'container',
        ops: [
          {id: 'svc', type: 'container/run', args: {image: 'ubuntu', cmd: ['sh', '-c', 'echo replica up; sleep 600']}},
        ],
      }),
    )
  })
  after(async () => {
    await box?.cleanup()
  })

  it('create -> fund -> start -> jobs -> events -> refusals while running -> stop -> withdraw -> delete', async () => {
    const created = await deployment([
      'deployment',
      'create',
      '--file',
      'svc.json',
      '--replicas',
      '2',
      '--strategy',
      'SIMPLE',
      '--timeout',
      '10m',
    ])
    assert.equal(created.status, 'DRAFT')
    assert.equal(created.owner, owner)
    assert.equal(created.timeout, 10)
    assert.equal(created.replicas, 2)
    const {id} = created
    const vault = new PublicKey(created.vault)

    const before = await balances(new PublicKey(owner))
    const funded = await json<{
      vault: string
      signature: string
      balance: {sol: {baseUnits: string}; tokens: {baseUnits: string}}
    }>(['deployment', 'fund', id, '--sol', '0.05', '--tokens', '2'])
    assert.equal(funded.vault, vault.toBase58())
    assert.equal(funded.balance.sol.baseUnits, '50000000')
    assert.equal(funded.balance.tokens.baseUnits, '2000000')
    assert.deepEqual(await balances(vault), {lamports: 50_000_000n, tokens: 2_000_000n, tokenAccount: true})

    // More than the wallet holds: exit 4, nothing sent.
    const tooMuch = await json<{error: {code: string}}>(['deployment', 'fund', id, '--tokens', '1000000'], 4)
    assert.equal(tooMuch.error.code, 'insufficient_balance')
    assert.deepEqual(await balances(vault), {lamports: 50_000_000n, tokens: 2_000_000n, tokenAccount: true})

    const started = await deployment(['deployment', 'start', id])
    assert.ok(['STARTING', 'RUNNING'].includes(started.status), started.status)

    type Jobs = {deployment: string; jobs: (Record<string, unknown> & {job: string; state: string})[]}
    const jobs = await eventually(
      'two jobs listed, one running',
      90_000,
      async () => {
        const page = await json<Jobs>(['deployment', 'jobs', id])
        return page.jobs.length === 2 && page.jobs.some((job) => job.state === 'RUNNING') ? page : undefined
      },
      1000,
    )
    for (const job of jobs.jobs) for (const member of JOB_MEMBERS) assert.ok(member in job, `job row without ${member}`)
    const running = await json<Jobs>(['deployment', 'jobs', id, '--state', 'RUNNING'])
    assert.ok(running.jobs.length >= 1 && running.jobs.every((job) => job.state === 'RUNNING'))
    // Each is a job of the chain, posted by the vault.
    const onChain = await json<{project: string; status: string}>(['job', 'get', jobs.jobs[0]!.job])
    assert.equal(onChain.project, vault.toBase58())

    // The running replica's output, read from its node with a header the manager signs as the vault.
    const running0 = running.jobs[0]!.job
    const logs = await eventually(
      "the replica's first line",
      30_000,
      async () => {
        const result = await cli(['deployment', 'logs', id])
        return result.stdout.includes(`[${running0}] replica up`) ? result : undefined
      },
      1000,
    )
    assert.equal(logs.code, 0, logs.stderr)

    // Events as JSON lines, each the network's Event.
    const events = await cli(['deployment', 'events', id, '--json'])
    assert.equal(events.code, 0, events.stderr)
    const lines = events.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    for (const event of lines) for (const member of EVENT_MEMBERS) assert.ok(member in event, `event without ${member}`)
    const types = lines.map((event) => event.type)
    assert.ok(types.includes('DEPLOYMENT_STARTED'), types.join(' '))
    assert.equal(types.filter((type) => type === 'JOB_LIST_CONFIRMED').length, 2, types.join(' '))

    // A running deployment is not deleted (nothing asked or sent), and its vault gives no more than it may: what
    // its replicas need next stays (exit 4, nothing moved).
    const refused = await json<{error: {code: string; status: string}}>(['deployment', 'delete', id, '--yes'], 2)
    assert.deepEqual(refused.error.code, 'deployment_running')
    const heldRunning = await balances(vault)
    const overAsked = await json<{error: {code: string; message: string}}>(
      ['deployment', 'withdraw', id, '--tokens', String(Number(heldRunning.tokens) / 1e6), '--yes'],
      4,
    )
    assert.equal(overAsked.error.code, 'withdraw_exceeds_available')
    assert.match(overAsked.error.message, new RegExp(`for the next listing or extension of every replica of ${id}`))
    assert.equal((await balances(vault)).tokens, heldRunning.tokens, 'nothing moved')
    assert.equal(heldRunning.tokens > 0n, true)

    // stop waits until the manager has stopped every job; logs --follow, begun before, ends once it is STOPPED.
    const following = cli(['deployment', 'logs', id, '--follow'])
    const stopped = await deployment(['deployment', 'stop', id, '--yes'])
    assert.equal(stopped.status, 'STOPPED')
    const followed = await following
    assert.equal(followed.code, 0, followed.stderr)
    assert.ok(followed.stdout.includes(`[${running0}] replica up`), followed.stdout)
    assert.match(followed.stderr, /is STOPPED; no more replicas to follow/)
    // Following the events of a STOPPED deployment prints them all and ends.
    const allEvents = await cli(['deployment', 'events', id, '--follow', '--json'])
    assert.equal(allEvents.code, 0, allEvents.stderr)
    assert.ok(allEvents.stdout.trim().split('\n').length > lines.length, allEvents.stdout)
    const again = await json<{error: {code: string}}>(['deployment', 'stop', id, '--yes'], 2)
    assert.equal(again.error.code, 'deployment_not_running')
    for (const job of jobs.jobs) {
      const ended = await cli(['job', 'get', job.job, '--json'])
      // A delisted job's account is closed (exit 7); an ended one is COMPLETED.
      if (ended.code === 0) assert.notEqual((JSON.parse(ended.stdout) as {status: string}).status, 'RUNNING')
      else assert.equal(ended.code, 7, ended.stderr)
    }

    // Withdraw: everything the vault holds comes back, to the last base unit, the fee of its two signatures aside.
    const held = await balances(vault)
    const walletBefore = await balances(new PublicKey(owner))
    const withdrawn = await json<{
      signature: string
      returned: {sol: {baseUnits: string}; tokens: {baseUnits: string}}
    }>(['deployment', 'withdraw', id, '--yes'])
    assert.equal(withdrawn.returned.tokens.baseUnits, String(held.tokens))
    const walletAfter = await balances(new PublicKey(owner))
    assert.deepEqual(await balances(vault), {lamports: 0n, tokens: 0n, tokenAccount: false})
    assert.equal(walletAfter.tokens - walletBefore.tokens, held.tokens)
    assert.equal(walletAfter.lamports - walletBefore.lamports, BigInt(withdrawn.returned.sol.baseUnits) - 10_000n)
    // What the wallet spent on the deployment: the jobs' pay and the listings' fees, nothing left in the vault.
    assert.ok(walletAfter.tokens <= before.tokens)

    const deleted = await json<{deleted: string}>(['deployment', 'delete', id, '--yes'])
    assert.equal(deleted.deleted, id)
    await json(['deployment', 'get', id], 7)
  })

  it('create --start with an empty vault is exit 4 (INSUFFICIENT_FUNDS), the new deployment named; a stop ends it', async () => {
    const result = await cli([
      'deployment',
      'create',
      '--file',
      'svc.json',
      '--timeout',
      '10m',
      '--time-scale',
      '20',
      '--start',
      '--json',
    ])
    assert.equal(result.code, 4, result.stderr)
    const printed = JSON.parse(result.stdout) as DeploymentJson & {
      error: {code: string; deployment: string; message: string}
    }
    assert.equal(printed.error.code, 'insufficient_funds')
    assert.equal(printed.error.deployment, printed.id)
    assert.equal(printed.status, 'INSUFFICIENT_FUNDS')
    assert.equal(printed.time_scale, 20)
    assert.match(
      printed.error.message,
      /^created deployment \S+, but it did not start: the vault \S+ holds 0 token base units/,
    )
    const start = await json<{error: {code: string}}>(['deployment', 'start', printed.id], 4)
    assert.equal(start.error.code, 'insufficient_funds')
    await deployment(['deployment', 'stop', printed.id, '--yes'])
  })

  it('API keys: made with the wallet, used instead of it, revoked (exit 6 from then on)', async () => {
    const made = await json<{id: string; key: string; name: string}>([
      'deployment',
      'api-key',
      'create',
      '--name',
      'ci',
    ])
    assert.equal(made.name, 'ci')
    const withKey = {...env, GPUNET_MANAGER_API_KEY: made.key}
    const listed = await runCli(['deployment', 'list', '--json'], {env: withKey})
    assert.equal(listed.code, 0, listed.stderr)
    assert.ok(Array.isArray((JSON.parse(listed.stdout) as {deployments: unknown[]}).deployments))
    const keys = await json<{keys: {id: string}[]}>(['deployment', 'api-key', 'list'])
    assert.ok(keys.keys.some((key) => key.id === made.id))
    assert.ok(!JSON.stringify(keys).includes(made.key), 'a listed key never shows the key itself')
    await json(['deployment', 'api-key', 'revoke', made.id])
    const refused = await runCli(['deployment', 'list', '--json'], {env: withKey})
    assert.equal(refused.code, 6, refused.stdout)
  })
})
