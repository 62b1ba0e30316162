import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, request, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {Gateway} from '../../../src/lib/gateway/gateway.js'
import {checkHoldBounds, HOLD_POLL_MS, MAX_HELD, STARTING_RETRY_AFTER_S} from '../../../src/lib/gateway/holding.js'
import type {ReplicaRoute} from '../../../src/lib/gateway/stable-url.js'
import {GpunetError} from '../../../src/lib/errors.js'
import {eventually} from '../../helpers/eventually.js'

const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'
const DEPLOYMENT = 'dep1'

interface Answer {
  status: number
  body: string
  retryAfter?: string
  reason?: string
}

/** A GET through the deployment's stable URL, on a connection of its own; `abort` gives it up. */
function get(port: number, path = '/'): {answer: Promise<Answer>; abort: () => void} {
  const req = request({
    host: '127.0.0.1',
    port,
    path,
    agent: false,
    headers: {host: `${DEPLOYMENT}.deploy.localhost:${port}`},
  })
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body,
          retryAfter: res.headers['retry-after'] as string | undefined,
          reason: res.headers['x-gpunet-gateway'] as string | undefined,
        }),
      )
    })
    req.on('error', reject)
  })
  req.end()
  return {answer, abort: () => req.destroy()}
}

describe('node gateway, holding requests of a deployment starting from zero', () => {
  let upstream: Server
  let upstreamPort: number
  let gateway: Gateway
  let port: number
  let replicas: ReplicaRoute[]
  let holds: boolean
  /** Answers of /slow wait until released. */
  let release: () => void
  let slow: Promise<void>

  before(async () => {
    upstream = createServer((req, res) => {
      if (req.url === '/slow') return void slow.then(() => res.end('slow'))
      res.end(`served ${req.url}`)
    })
    upstream.listen(0, '127.0.0.1')
    await once(upstream, 'listening')
    upstreamPort = (upstream.address() as AddressInfo).port
  })

  after(async () => {
    upstream.closeAllConnections()
    await new Promise((r) => upstream.close(r))
  })

  /** A gateway in front of the deployment, with the hold bounds given. */
  async function start(hold?: {maxHeld?: number; holdMs?: number}): Promise<void> {
    gateway = new Gateway({hold})
    port = Number(new URL(await gateway.listen(0)).port)
    replicas = []
    holds = true
    slow = new Promise((resolve) => (release = resolve))
    gateway.useDeployments({
      deploymentRoutes: async (deployment) => (deployment === DEPLOYMENT ? replicas : null),
      holdsAtZero: async (deployment) => deployment === DEPLOYMENT && holds,
    })
    gateway.register(JOB, [80])
  }

  /** The replica listed and ready, as its manager and its node would say. */
  function replicaReady(): void {
    gateway.ready(JOB, 80, upstreamPort)
    replicas = [{job: JOB, ready: true, draining: false}]
  }

  afterEach(async () => {
    release()
    await gateway.close()
  })

  it('holds a request until a replica is ready, then forwards it; fires onHeld once', async () => {
    await start()
    const heard: string[] = []
    gateway.onHeld((deployment) => heard.push(deployment))
    const first = get(port, '/first')
    const second = get(port, '/second')
    await eventually(
      'both requests held',
      5000,
      async () => (gateway.traffic(DEPLOYMENT).held === 2 ? true : undefined),
      20,
    )
    assert.deepEqual(heard, [DEPLOYMENT], 'onHeld fires at the first held request only')
    // A replica listed but not ready yet (starting) keeps them held.
    replicas = [{job: JOB, ready: false, draining: false}]
    assert.equal(gateway.traffic(DEPLOYMENT).held, 2)
    replicaReady()
    assert.deepEqual(await first.answer, {status: 200, body: 'served /first', retryAfter: undefined, reason: undefined})
    assert.equal((await second.answer).body, 'served /second')
    assert.deepEqual(gateway.traffic(DEPLOYMENT), {inFlight: 0, held: 0})
  })

  it('counts the requests in flight to the deployment while their answers are under way', async () => {
    await start()
    replicaReady()
    const answers = [get(port, '/slow'), get(port, '/slow'), get(port, '/slow')]
    await eventually(
      'three in flight',
      5000,
      async () => (gateway.traffic(DEPLOYMENT).inFlight === 3 ? true : undefined),
      20,
    )
    assert.equal(gateway.inFlight(JOB), 3)
    release()
    for (const {answer} of answers) assert.equal((await answer).body, 'slow')
    await eventually(
      'none in flight',
      5000,
      async () => (gateway.traffic(DEPLOYMENT).inFlight === 0 ? true : undefined),
      20,
    )
  })

  it(`holds at most ${MAX_HELD} requests per deployment: the next is told at once the service is starting`, async () => {
    await start()
    const held = Array.from({length: MAX_HELD}, () => get(port))
    await eventually(`${MAX_HELD} held`, 10_000, async () =>
      gateway.traffic(DEPLOYMENT).held === MAX_HELD ? true : undefined,
    )
    const turnedAway = await get(port).answer
    assert.equal(turnedAway.status, 503)
    assert.equal(turnedAway.retryAfter, String(STARTING_RETRY_AFTER_S))
    assert.equal(turnedAway.reason, 'starting')
    assert.match(JSON.parse(turnedAway.body).message, /service is starting/)
    assert.equal(gateway.traffic(DEPLOYMENT).held, MAX_HELD, 'the one turned away was never held')
    replicaReady()
    for (const {answer} of held) assert.equal((await answer).status, 200)
  })

  it('holds 120 requests and answers them all without a MaxListenersExceededWarning (none after a plain one either)', async () => {
    const warnings: Error[] = []
    const heard = (warning: Error) => {
      if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning)
    }
    process.on('warning', heard)
    try {
      await start({maxHeld: 120})
      const held = Array.from({length: 120}, (_, i) => get(port, `/held${i}`))
      await eventually('120 held', 10_000, async () => (gateway.traffic(DEPLOYMENT).held === 120 ? true : undefined))
      // Held over several polls (HOLD_POLL_MS each), as a replica's start holds them.
      await new Promise((resolve) => setTimeout(resolve, 5 * HOLD_POLL_MS))
      replicaReady()
      for (const [i, {answer}] of held.entries()) assert.equal((await answer).body, `served /held${i}`)
      // A request that was never held goes the same way through the stable URL.
      assert.equal((await get(port, '/plain').answer).body, 'served /plain')
      // A warning is emitted on the next tick of its listener's addition: give it one.
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepEqual(
        warnings.map((w) => w.message),
        [],
      )
    } finally {
      process.off('warning', heard)
    }
  })

  it('answers 503 with Retry-After past the hold bound, and forgets a held request whose client left', async () => {
    await start({holdMs: 1000})
    const abandoned = get(port)
    abandoned.answer.catch(() => {})
    await eventually('one held', 5000, async () => (gateway.traffic(DEPLOYMENT).held === 1 ? true : undefined), 20)
    abandoned.abort()
    await eventually('none held', 5000, async () => (gateway.traffic(DEPLOYMENT).held === 0 ? true : undefined), 20)
    const late = await get(port).answer
    assert.equal(late.status, 503)
    assert.equal(late.retryAfter, String(STARTING_RETRY_AFTER_S))
    assert.match(JSON.parse(late.body).message, /service is starting .*within the 1 s it waited/)
    assert.equal(gateway.traffic(DEPLOYMENT).held, 0)
  })

  it('answers as before without a policy scaling to zero: 503 Retry-After 1 at once', async () => {
    await start()
    holds = false
    const answer = await get(port).answer
    assert.deepEqual([answer.status, answer.retryAfter, answer.reason], [503, '1', 'no-replica'])
    assert.equal(gateway.traffic(DEPLOYMENT).held, 0)
  })

  it('refuses hold bounds out of range (exit 2) and takes up to 30 minutes', () => {
    for (const bad of [{maxHeld: 0}, {maxHeld: 1001}, {maxHeld: 1.5}, {holdMs: 999}, {holdMs: 30 * 60_000 + 1}])
      assert.throws(
        () => checkHoldBounds(bad),
        (error: unknown) => error instanceof GpunetError && error.exitCode === 2,
      )
    assert.deepEqual(checkHoldBounds({holdMs: 30 * 60_000}), {maxHeld: MAX_HELD, holdMs: 30 * 60_000})
    assert.deepEqual(checkHoldBounds(), {maxHeld: 100, holdMs: 120_000})
  })
})
