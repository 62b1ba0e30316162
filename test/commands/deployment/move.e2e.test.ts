/**
 * `gpunet deployment move` and `deployment create --queue-timeout` end to end through the built CLI, on a localnet
 * of three markets (podman): `localnet` and `east` of two nodes each, `full` of none. A deployment of two replicas
 * moved from `localnet` to `east` lists both on `east`, stops the old only once the new serve, and its stable URL
 * answers every request of a client looping on it throughout; the refusals of a bad move; a deployment created on
 * `full` with a need and a queue timeout moves itself to the market placement puts first (`localnet`: free nodes,
 * the cheaper), its queued replica delisted.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {readKeypair} from '../../../src/lib/keys/wallet.js'
import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {api, deploymentEvents, deploymentJobs} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {okService, requirePodman} from '../../helpers/podman.js'
import {loopOnStableUrl, type StableUrlClient} from '../../helpers/stable-url-client.js'

const MARKETS = `markets:
  - slug: localnet
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.0001
    nodes:
      - count: 2
  - slug: east
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.0002
    nodes:
      - count: 2
  - slug: full
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.00005
    nodes: []
`

/** An HTTP service answering `ok`; its continuous health check is the readiness the move waits for. */
const SERVICE = okService('w')

const live = (state: string) => state === 'QUEUED' || state === 'RUNNING'

describe('deployment move and --queue-timeout on a localnet of three markets (podman)', function () {
  this.timeout(240_000)
  requirePodman()
  let box: CliSandbox
  let status: LocalnetStatus
  let owner: Keypair
  let client: StableUrlClient | null = null

  const cli = (args: string[]) => runCli(args, {env: box.env, cwd: box.dir})
  const json = async <T = {id: string; market: string; status: string}>(args: string[]) => {
    const result = await cli([...args, '--json'])
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}${result.stdout}`)
    return JSON.parse(result.stdout) as T
  }
  const manager = () => status.deploymentManager!
  const market = (slug: string) => status.markets.find((m) => m.slug === slug)!.address
  const types = async (id: string) =>
    (await deploymentEvents(manager(), owner, id)).map((e) => e.type).filter((t) => /MOVE|QUEUE_TIMEOUT/.test(t))
  const eventOf = async (id: string, type: string) =>
    eventually(`${type} of ${id}`, 120_000, async () =>
      (await deploymentEvents(manager(), owner, id)).find((e) => e.type === type),
    )

  /** Creates (on its own vault), funds and starts a deployment of SERVICE with `args`. */
  const startService = async (args: string[]) => {
    const created = await json(['deployment', 'create', '--file', 'svc.json', '--vault', 'new', ...args])
    await json(['deployment', 'fund', created.id, '--sol', '0.2', '--tokens', '20'])
    await json(['deployment', 'start', created.id])
    return created
  }

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    writeFileSync(join(box.dir, 'markets.yaml'), MARKETS)
    writeFileSync(join(box.dir, 'svc.json'), JSON.stringify(SERVICE))
    const started = await runCli(
      ['localnet', 'start', '--detach', '--markets', join(box.dir, 'markets.yaml'), '--runtime', 'podman', '--json'],
      {env: box.env},
    )
    assert.equal(started.code, 0, started.stderr)
    status = JSON.parse(started.stdout) as LocalnetStatus
    assert.deepEqual(
      status.markets.map((m) => [m.slug, m.nodes]),
      [
        ['localnet', 2],
        ['east', 2],
        ['full', 0],
      ],
    )
    owner = readKeypair(box.env.GPUNET_WALLET!)
  })
  afterEach(async () => {
    await client?.stop()
    client = null
  })
  after(() => box?.cleanup())

  it('moves 2 replicas to another market without a failed request at the stable URL; refuses bad moves', async () => {
    const d = await startService([
      '--replicas',
      '2',
      '--strategy',
      'SIMPLE-EXTEND',
      '--timeout',
      '60m',
      '--time-scale',
      '20',
    ])
    assert.equal(d.market, market('localnet'))
    const host = `${d.id.toLowerCase()}.deploy.localhost`
    const port = Number(new URL(status.gatewayUrl!).port)
    await eventually('both replicas running', 90_000, async () => {
      const rows = await deploymentJobs(manager(), owner, d.id)
      return rows.filter((r) => r.state === 'RUNNING').length === 2 ? rows : undefined
    })
    const probe = loopOnStableUrl(port, host, 'ok', 100)
    await eventually('the stable URL answers', 90_000, async () => (probe.ok > 0 ? true : undefined), 200)
    await probe.stop()
    client = loopOnStableUrl(port, host, 'ok')

    // Bad moves, each refused before anything changes.
    const notAddress = await cli(['deployment', 'move', d.id, '--market', 'nope'])
    assert.equal(notAddress.code, 2, notAddress.stderr)
    const same = await cli(['deployment', 'move', d.id, '--market', market('localnet'), '--json'])
    assert.equal(same.code, 2, same.stderr)
    assert.equal((JSON.parse(same.stdout) as {error: {code: string}}).error.code, 'same_market')
    const unknown = await cli(['deployment', 'move', d.id, '--market', Keypair.generate().publicKey.toBase58()])
    assert.equal(unknown.code, 3, unknown.stderr)
    assert.match(unknown.stderr, /is not a market of localnet/)
    const nobody = await cli([
      'deployment',
      'move',
      Keypair.generate().publicKey.toBase58(),
      '--market',
      market('east'),
    ])
    assert.equal(nobody.code, 7, nobody.stderr)
    assert.deepEqual(await types(d.id), [])

    const moved = await json<{market: string; moved: {from: string; to: string; moving: boolean; how: string}}>([
      'deployment',
      'move',
      d.id,
      '--market',
      market('east'),
    ])
    assert.deepEqual(
      [moved.market, moved.moved.from, moved.moved.to, moved.moved.moving],
      [market('east'), market('localnet'), market('east'), true],
    )
    assert.match(moved.moved.how, /drained and stopped once the new are ready, else the move is rolled back/)

    // Both new replicas listed beside the old ones, which serve until the new ones are ready.
    const surge = await eventually('both new replicas listed while the old run', 60_000, async () => {
      const rows = await deploymentJobs(manager(), owner, d.id)
      const east = rows.filter((r) => r.market === market('east') && live(r.state))
      return east.length === 2 ? rows : undefined
    })
    const old = surge.filter((r) => r.market === market('localnet')).map((r) => r.job)
    assert.equal(old.length, 2)
    await eventOf(d.id, 'DEPLOYMENT_MOVED')
    const after = await eventually('the old replicas stopped', 60_000, async () => {
      const rows = await deploymentJobs(manager(), owner, d.id)
      return rows.filter((r) => live(r.state)).every((r) => r.market === market('east')) ? rows : undefined
    })
    assert.deepEqual(
      after.filter((r) => live(r.state)).map((r) => [r.market, r.state]),
      [
        [market('east'), 'RUNNING'],
        [market('east'), 'RUNNING'],
      ],
    )
    assert.deepEqual(await types(d.id), ['DEPLOYMENT_MOVE_STARTED', 'DEPLOYMENT_MOVE_DRAINING', 'DEPLOYMENT_MOVED'])
    // Requests went on throughout: the new replicas took them before the old were drained and stopped.
    await client.stop()
    assert.deepEqual(client.failures, [], `${client.failures.length} of ${client.ok + client.failures.length} failed`)
    assert.ok(client.ok > 20, `only ${client.ok} requests answered`)
    client = null

    // Stopped, then archived: an archived deployment does not move (exit 2, the hint to duplicate it).
    await json(['deployment', 'stop', d.id, '--yes'])
    assert.equal((await api(manager(), owner, 'POST', `/api/deployments/${d.id}/archive`)).status, 200)
    const archived = await cli(['deployment', 'move', d.id, '--market', market('localnet'), '--json'])
    assert.equal(archived.code, 2, archived.stderr)
    const refusal = JSON.parse(archived.stdout) as {error: {code: string; hint: string}}
    assert.equal(refusal.error.code, 'deployment_archived')
    assert.match(refusal.error.hint, /deployment duplicate/)
  })

  it("a move the vault cannot pay beside the old replicas' deposits is exit 4, nothing changed", async () => {
    const created = await json([
      'deployment',
      'create',
      '--file',
      'svc.json',
      '--vault',
      'new',
      '--timeout',
      '60m',
      '--time-scale',
      '20',
    ])
    // Funded with exactly what a start asks (its refusal says how much): the running replica holds all of it.
    const refused = await cli(['deployment', 'start', created.id])
    assert.equal(refused.code, 4, refused.stderr)
    const [, tokens, lamports] = /needs (\d+) token base units .* and (\d+) lamports/.exec(refused.stderr)!
    const sol = (Number(lamports) / 1e9).toFixed(9)
    await json(['deployment', 'fund', created.id, '--sol', sol, '--tokens', (Number(tokens) / 1e6).toFixed(6)])
    await json(['deployment', 'start', created.id])
    await eventually('RUNNING', 60_000, async () =>
      (await json(['deployment', 'get', created.id])).status === 'RUNNING' ? true : undefined,
    )
    const poor = await cli(['deployment', 'move', created.id, '--market', market('east'), '--json'])
    assert.equal(poor.code, 4, poor.stderr)
    const {error} = JSON.parse(poor.stdout) as {error: {code: string; message: string}}
    assert.equal(error.code, 'insufficient_funds')
    assert.match(error.message, new RegExp(`moving lists 1 new replicas on ${market('east')} beside the old ones`))
    assert.equal((await json(['deployment', 'get', created.id])).market, market('localnet'))
    assert.deepEqual(await types(created.id), [])
    await json(['deployment', 'stop', created.id, '--yes'])
  })

  it('a deployment on a market with no free node and --queue-timeout moves itself to the market placement puts first', async () => {
    const bad = await cli([
      'deployment',
      'create',
      '--file',
      'svc.json',
      '--timeout',
      '60m',
      '--queue-timeout',
      '30s',
      '--json',
    ])
    assert.equal(bad.code, 2, bad.stderr)
    assert.equal((JSON.parse(bad.stdout) as {error: {code: string}}).error.code, 'invalid_queue_timeout')
    const long = await cli(['deployment', 'create', '--file', 'svc.json', '--timeout', '10m', '--queue-timeout', '11m'])
    assert.equal(long.code, 2, long.stderr)
    // The manager's own check: at most the market's job timeout (the localnet's markets: 7200 s).
    const pastMarket = await api(manager(), owner, 'POST', '/api/deployments/create', {
      name: 'past-market',
      replicas: 1,
      timeout: 180,
      strategy: 'SIMPLE',
      job_definition: SERVICE,
      queue_timeout: 7201,
    })
    assert.equal(pastMarket.status, 400, JSON.stringify(pastMarket.body))
    assert.match(JSON.stringify(pastMarket.body), /longer than the market's job timeout \(7200 s\)/)

    const d = await startService([
      '--market',
      market('full'),
      '--min-vram',
      '12',
      '--queue-timeout',
      '1m',
      '--timeout',
      '60m',
      '--time-scale',
      '20',
    ])
    assert.equal(d.market, market('full'))
    const got = await json<{queue_timeout: number}>(['deployment', 'get', d.id])
    assert.equal(got.queue_timeout, 60)
    const queued = await eventually('its replica listed on full', 60_000, async () => {
      const rows = await deploymentJobs(manager(), owner, d.id)
      return rows.length === 1 ? rows[0] : undefined
    })
    assert.equal(queued.state, 'QUEUED')

    const why = await eventOf(d.id, 'QUEUE_TIMEOUT')
    assert.match(why.message, new RegExp(`job ${queued.job} waited QUEUED \\d+ s, past the queue timeout \\(60 s`))
    await eventOf(d.id, 'DEPLOYMENT_MOVED')
    const rows = await eventually('the queued replica delisted', 60_000, async () => {
      const all = await deploymentJobs(manager(), owner, d.id)
      return all.filter((r) => live(r.state)).length === 1 ? all : undefined
    })
    const running = rows.filter((r) => live(r.state))
    assert.deepEqual(
      running.map((r) => [r.market, r.state]),
      [[market('localnet'), 'RUNNING']],
    )
    assert.equal(rows.find((r) => r.job === queued.job)!.state, 'STOPPED')
    assert.equal((await json(['deployment', 'get', d.id])).market, market('localnet'))
    assert.deepEqual(await types(d.id), [
      'QUEUE_TIMEOUT',
      'DEPLOYMENT_MOVE_STARTED',
      'DEPLOYMENT_MOVE_DRAINING',
      'DEPLOYMENT_MOVED',
    ])
    await json(['deployment', 'stop', d.id, '--yes'])
  })
})
