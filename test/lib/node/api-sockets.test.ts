/**
 * Idle node-API sockets cannot lock the gateway (issue 42, finding 4): past MAX_API_SOCKETS_PER_ADDRESS from one
 * address an upgrade is refused with 429 before any handshake, a socket that sends nothing is closed after its
 * first-message deadline, and a job's service is still reached while the API's share is used up.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, request, type Server} from 'node:http'
import {type AddressInfo, connect} from 'node:net'

import {setTimeout as sleep} from 'node:timers/promises'

import {Keypair} from '@solana/web3.js'
import WebSocket from 'ws'

import {FeedRegistry} from '../../../src/lib/node/api-server/feed.js'
import {MAX_API_SOCKETS_PER_ADDRESS, NodeApi} from '../../../src/lib/node/api-server/server.js'
import {Gateway} from '../../../src/lib/gateway/gateway.js'
import {signHeader} from '../../../src/lib/node-api/protocol.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'

const NODE = Keypair.generate().publicKey.toBase58()
const JOB = Keypair.generate().publicKey.toBase58()
const POSTER = Keypair.generate()

describe('node API sockets: a share of the gateway, and a deadline for the first message', function () {
  this.timeout(30_000)
  let gateway: Gateway
  let service: Server
  let jobLookups = 0

  /** A gateway with the node's API mounted, whose sockets must send a first message within `firstMessageMs`. */
  async function startGateway(firstMessageMs: number): Promise<Gateway> {
    const started = new Gateway()
    await started.listen(0)
    // Only what the socket limits need of a node: one job, running here.
    const feeds = new FeedRegistry()
    feeds.open(JOB)
    const api = new NodeApi(
      {
        address: NODE,
        feeds,
        jobTerms: async (job) => {
          jobLookups++
          return job === JOB ? {poster: POSTER.publicKey.toBytes(), timeoutSeconds: 600} : null
        },
        endpoints: () => null,
        stop: () => false,
        control: () => null,
      },
      {firstMessageMs},
    )
    started.mountNodeApi(NODE, api)
    started.register(JOB, [80])
    started.ready(JOB, 80, (service.address() as AddressInfo).port)
    return started
  }

  before(async () => {
    service = createServer((_req, res) => res.end('service answers'))
    service.listen(0, '127.0.0.1')
    await once(service, 'listening')
    gateway = await startGateway(300)
  })

  after(async () => {
    await gateway.close()
    service.close()
  })

  const port = (at = gateway) => Number(new URL(at.url).port)

  /** Opens an API socket; resolves once open, or with the status of a refused upgrade. */
  function open(at = gateway): Promise<{ws: WebSocket} | {status: number}> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port(at)}/`, {headers: {host: `${NODE}.node.localhost:${port(at)}`}})
      ws.on('open', () => resolve({ws}))
      ws.on('unexpected-response', (_req, res) => resolve({status: res.statusCode ?? 0}))
      ws.on('error', reject)
    })
  }

  function serviceGet(at = gateway): Promise<{status: number; body: string}> {
    return new Promise((resolve, reject) => {
      const req = request(
        {host: '127.0.0.1', port: port(at), path: '/', headers: {host: `${JOB}.node.localhost:${port(at)}`}},
        (res) => {
          let body = ''
          res.on('data', (chunk: Buffer) => (body += chunk.toString()))
          res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
        },
      )
      req.on('error', reject)
      req.end()
    })
  }

  it(`refuses socket ${MAX_API_SOCKETS_PER_ADDRESS + 1} from one address with 429 before the handshake; the service still answers`, async () => {
    // A deadline no loaded machine reaches while the sockets open one by one: none closes before the limit is hit.
    const patient = await startGateway(60_000)
    const sockets: WebSocket[] = []
    try {
      for (let i = 0; i < MAX_API_SOCKETS_PER_ADDRESS; i++) {
        const opened = await open(patient)
        assert.ok('ws' in opened, `socket ${i + 1} opens`)
        sockets.push(opened.ws)
      }
      const refused = await open(patient)
      assert.deepEqual(refused, {status: 429})
      assert.deepEqual(await serviceGet(patient), {status: 200, body: 'service answers'})
      assert.equal(jobLookups, 0, 'no socket asked anything, so nothing was looked up')
      // A closed socket gives its place back.
      const closing = sockets.pop()!
      closing.close()
      await once(closing, 'close')
      const again = await open(patient)
      assert.ok('ws' in again)
      sockets.push(again.ws)
    } finally {
      for (const ws of sockets) ws.terminate()
      await patient.close()
    }
  })

  it('closes a gateway connection that sends no request within the headers deadline (10 s by default)', async () => {
    const quick = new Gateway({headersTimeoutMs: 300})
    await quick.listen(0)
    try {
      const idle = connect(Number(new URL(quick.url).port), '127.0.0.1')
      await once(idle, 'connect')
      const started = Date.now()
      idle.resume()
      await once(idle, 'close')
      assert.ok(Date.now() - started < 5000, `closed after ${Date.now() - started} ms`)
    } finally {
      await quick.close()
    }
  })

  it('closes a socket that sends nothing (1008) once its first-message deadline passes', async () => {
    const opened = await open()
    assert.ok('ws' in opened)
    const [code, reason] = (await once(opened.ws, 'close')) as [number, Buffer]
    assert.equal(code, 1008)
    assert.match(reason.toString(), /No request within 300 ms/)
  })

  it('keeps a socket that subscribed in time open past the deadline', async () => {
    const opened = await open()
    assert.ok('ws' in opened)
    const header = signHeader((m) => walletFromBytes(POSTER.secretKey).sign(m), {action: 'read', node: NODE, job: JOB})
    opened.ws.send(JSON.stringify({path: '/flog', header, body: {jobAddress: JOB}}))
    // Fixed: the socket must still be open once the 300 ms deadline has passed, with nothing to wait for.
    await sleep(600)
    assert.equal(opened.ws.readyState, WebSocket.OPEN)
    opened.ws.terminate()
  })
})
