/**
 * A node API request with two `authorization` headers is refused (issue 61): node:http keeps the first copy in
 * `req.headers` and drops the second, so a valid header followed by any other opened the route. Real node API on
 * 127.0.0.1, real ed25519 headers; raw requests, since fetch joins two copies of a header into one.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, type Server} from 'node:http'
import {connect, type AddressInfo} from 'node:net'

import {Keypair} from '@solana/web3.js'

import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {FeedRegistry} from '../../../src/lib/node/api-server/feed.js'
import {NodeApi} from '../../../src/lib/node/api-server/server.js'
import {signHeader} from '../../../src/lib/node-api/protocol.js'

const NODE = Keypair.generate().publicKey.toBase58()
const JOB = Keypair.generate().publicKey.toBase58()
const POSTER = Keypair.generate()

describe('node API: two authorization headers are refused', function () {
  this.timeout(20_000)
  let server: Server
  let port: number
  /** Jobs the API was asked to stop. */
  const stopped: string[] = []

  before(async () => {
    const feeds = new FeedRegistry()
    feeds.open(JOB)
    const api = new NodeApi({
      address: NODE,
      feeds,
      jobTerms: async (job) => (job === JOB ? {poster: POSTER.publicKey.toBytes(), timeoutSeconds: 600} : null),
      endpoints: () => null,
      stop: (job) => (stopped.push(job), true),
      control: () => null,
    })
    server = createServer((req, res) => api.serve(req, res))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    port = (server.address() as AddressInfo).port
  })
  after(() => server.close())
  beforeEach(() => (stopped.length = 0))

  const header = (action: 'read' | 'stop') =>
    signHeader((m) => walletFromBytes(POSTER.secretKey).sign(m), {action, node: NODE, job: JOB})

  /** Sends a request with the given header lines as they are; resolves with the status and body. */
  async function raw(method: string, path: string, headers: string[]): Promise<{status: number; body: string}> {
    const socket = connect(port, '127.0.0.1')
    await once(socket, 'connect')
    const lines = [`${method} ${path} HTTP/1.1`, 'host: node', 'connection: close', 'content-length: 0', ...headers]
    socket.end(`${lines.join('\r\n')}\r\n\r\n`)
    const chunks: Buffer[] = []
    for await (const chunk of socket) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString()
    return {status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4)}
  }

  it('answers one valid header (the control)', async () => {
    const answer = await raw('POST', `/job/${JOB}/stop`, [`authorization: ${header('stop')}`])
    assert.equal(answer.status, 200, answer.body)
    assert.deepEqual(stopped, [JOB])
  })

  it('refuses a valid header followed by another (401), and stops nothing', async () => {
    const answer = await raw('POST', `/job/${JOB}/stop`, [`authorization: ${header('stop')}`, 'authorization: x:y'])
    assert.equal(answer.status, 401, answer.body)
    assert.match(answer.body, /more than one authorization header/)
    assert.deepEqual(stopped, [])
  })

  it('refuses two copies of the same valid header on every signed route', async () => {
    const read = header('read')
    for (const path of [`/job/${JOB}/results`, `/job/${JOB}/endpoints`, `/job/${JOB}/stats`]) {
      const answer = await raw('GET', path, [`authorization: ${read}`, `Authorization: ${read}`])
      assert.equal(answer.status, 401, `${path}: ${answer.body}`)
      assert.match(answer.body, /more than one authorization header/)
    }
    const op = await raw('POST', `/job/${JOB}/operation/web/stop`, [
      `authorization: ${header('stop')}`,
      `authorization: ${header('stop')}`,
    ])
    assert.equal(op.status, 401, op.body)
  })
})
