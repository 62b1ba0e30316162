/**
 * A `/terminal` grant that names an operation opens a shell in that operation only (issue 61): a request that
 * leaves `op` out took the job's only running operation, whichever it was. Real node API on 127.0.0.1, real
 * ed25519 grants.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {Keypair} from '@solana/web3.js'
import WebSocket from 'ws'

import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {FeedRegistry} from '../../../src/lib/node/api-server/feed.js'
import type {OperationAccess} from '../../../src/lib/node/api-server/access.js'
import {NodeApi} from '../../../src/lib/node/api-server/server.js'
import {signTerminalGrant, TERMINAL_PATH} from '../../../src/lib/node-api/terminal-protocol.js'

const NODE = Keypair.generate().publicKey.toBase58()
const JOB = Keypair.generate().publicKey.toBase58()
const POSTER = Keypair.generate()

describe("node API /terminal: the grant's operation, with or without op in the request", function () {
  this.timeout(20_000)
  let server: Server
  let url: string
  /** The operations a shell was asked for, by id. */
  const opened: string[] = []
  /** Only `sidecar` runs: the grant's `web` has ended. */
  const running = new Map<string, OperationAccess>([['sidecar', operation('sidecar')]])

  function operation(id: string): OperationAccess {
    return {
      exec: () => {
        opened.push(id)
        throw new Error('no shell in this test')
      },
      sample: async () => null,
    }
  }

  before(async () => {
    const feeds = new FeedRegistry()
    feeds.open(JOB)
    const api = new NodeApi({
      address: NODE,
      feeds,
      jobTerms: async (job) => (job === JOB ? {poster: POSTER.publicKey.toBytes(), timeoutSeconds: 600} : null),
      endpoints: () => null,
      stop: () => false,
      control: () => null,
      operations: (job) => (job === JOB ? running : null),
    })
    server = createServer((req, res) => api.serve(req, res))
    server.on('upgrade', (req, socket, head) => api.upgrade(req, socket, head))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`
  })
  after(() => server.close())
  beforeEach(() => (opened.length = 0))

  /** Sends one `/terminal` request; resolves with how the node closed the socket. */
  async function terminal(body: Record<string, unknown>): Promise<{code: number; reason: string}> {
    const ws = new WebSocket(url)
    await once(ws, 'open')
    ws.send(JSON.stringify({path: TERMINAL_PATH, body: {jobAddress: JOB, ...body}}))
    const [code, reason] = (await once(ws, 'close')) as [number, Buffer]
    return {code, reason: reason.toString()}
  }
  const grant = (op?: string) =>
    signTerminalGrant((m) => walletFromBytes(POSTER.secretKey).sign(m), {
      job: JOB,
      node: NODE,
      network: 'localnet',
      ...(op ? {op} : {}),
    })

  it('refuses a grant for `web` when the request leaves op out, and opens nothing', async () => {
    const closed = await terminal({...grant('web')})
    assert.equal(closed.code, 3000, `${closed.code} ${closed.reason}`)
    assert.match(closed.reason, /the grant names another operation/)
    assert.deepEqual(opened, [])
  })

  it('still refuses a grant for `web` asked for `sidecar`, and opens a job-wide grant in the running one', async () => {
    const other = await terminal({...grant('web'), op: 'sidecar'})
    assert.equal(other.code, 3000, `${other.code} ${other.reason}`)
    assert.deepEqual(opened, [])
    await terminal({...grant()})
    assert.deepEqual(opened, ['sidecar'])
  })
})
