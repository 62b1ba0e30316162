/**
 * The node API's `/exec` and `/stats` against a host operation (issue 40): a command runs beside the operation's
 * processes with its folder and environment and counts in its figures, and a client that never reads is bounded,
 * then closed, its command ended.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {get, type IncomingMessage} from 'node:http'
import {setTimeout as sleep} from 'node:timers/promises'

import {Keypair} from '@solana/web3.js'
import WebSocket from 'ws'

import {FeedRegistry} from '../../../src/lib/node/api-server/feed.js'
import {EXEC_BACKLOG_BYTES} from '../../../src/lib/node/api-server/exec.js'
import type {OperationAccess} from '../../../src/lib/node/api-server/access.js'
import {NodeApi} from '../../../src/lib/node/api-server/server.js'
import {Gateway} from '../../../src/lib/gateway/gateway.js'
import {HostProcessRuntime} from '../../../src/lib/node/runtime/host-process.js'
import type {RunningOperation} from '../../../src/lib/node/runtime/runtime.js'
import {planOperations} from '../../../src/lib/node/operation-plan.js'
import {EXEC_PATH} from '../../../src/lib/node-api/exec-protocol.js'
import {signHeader} from '../../../src/lib/node-api/protocol.js'
import type {TaskStat} from '../../../src/lib/node-api/stats-protocol.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {eventually} from '../../helpers/eventually.js'

const NODE = Keypair.generate().publicKey.toBase58()
const JOB = Keypair.generate().publicKey.toBase58()
const POSTER = Keypair.generate()

describe('node API /exec: a host operation, and a client that never reads', function () {
  this.timeout(30_000)
  const runtime = new HostProcessRuntime({allowHostProcesses: true})
  let gateway: Gateway
  let op: RunningOperation
  /** Each command started: the bytes it wrote, and whether it ended. */
  const started: {produced: number; ended: boolean}[] = []

  before(async () => {
    const [plan] = planOperations({
      version: '0.1',
      type: 'container',
      ops: [{id: 'main', type: 'container/run', args: {image: 'unused', cmd: ['sleep', '60'], env: {ANSWER: '42'}}}],
    } as never)
    op = await runtime.start(plan!, {jobId: JOB})
    const access: OperationAccess = {
      exec: (cmd, options) => {
        const proc = runtime.exec(op, cmd, options)
        const entry = {produced: 0, ended: false}
        started.push(entry)
        proc.child.stdout?.on('data', (chunk: Buffer) => (entry.produced += chunk.length))
        proc.child.on('close', () => (entry.ended = true))
        return proc
      },
      sample: () => runtime.sample(op),
    }
    gateway = new Gateway()
    await gateway.listen(0)
    const api = new NodeApi(
      {
        address: NODE,
        feeds: new FeedRegistry(),
        jobTerms: async (job) => (job === JOB ? {poster: POSTER.publicKey.toBytes(), timeoutSeconds: 600} : null),
        endpoints: () => null,
        stop: () => false,
        control: () => null,
        operations: (job) => (job === JOB ? new Map([['main', access]]) : null),
      },
      {execStallMs: 500},
    )
    gateway.mountNodeApi(NODE, api)
  })

  after(async () => {
    await op?.stop(0)
    await gateway?.close()
  })

  function exec(cmd: string[]): WebSocket {
    const port = Number(new URL(gateway.url).port)
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host: `${NODE}.node.localhost:${port}`}})
    const header = signHeader((m) => walletFromBytes(POSTER.secretKey).sign(m), {action: 'exec', node: NODE, job: JOB})
    ws.on('open', () => ws.send(JSON.stringify({path: EXEC_PATH, header, body: {jobAddress: JOB, cmd}})))
    return ws
  }

  it("runs the command in the operation's folder with its environment", async () => {
    const ws = exec(['sh', '-c', 'echo "$ANSWER $GPUNET_OPERATION"; pwd; exit 5'])
    let out = ''
    let exit: unknown
    ws.on('message', (data, binary) => {
      if (binary) out += (data as Buffer).subarray(1).toString()
      else exit = JSON.parse(data.toString())
    })
    const [code] = (await once(ws, 'close')) as [number]
    assert.equal(code, 1000)
    assert.deepEqual(exit, {type: 'exit', code: 5})
    const [env, cwd] = out.trim().split('\n')
    // The marker: a digest of the runtime's owner, then the operation's own id.
    assert.match(env!, /^42 [0-9a-f]{16}\.[0-9a-f-]{36}$/)
    assert.match(cwd!, /gpunet-host-/)
  })

  it("/stats of a host operation: its processes' CPU (a command run in it counts), network null", async () => {
    const stats = async () => {
      const port = Number(new URL(gateway.url).port)
      const header = signHeader((m) => walletFromBytes(POSTER.secretKey).sign(m), {
        action: 'read',
        node: NODE,
        job: JOB,
      })
      // node:http, since fetch sets the Host header itself: the gateway routes by it.
      const [res] = (await once(
        get({
          host: '127.0.0.1',
          port,
          path: `/job/${JOB}/stats`,
          headers: {host: `${NODE}.node.localhost`, authorization: header},
        }),
        'response',
      )) as [IncomingMessage]
      assert.equal(res.statusCode, 200)
      let body = ''
      for await (const chunk of res) body += String(chunk)
      const [stat] = JSON.parse(body) as TaskStat[]
      assert.equal(stat!.opId, 'main')
      assert.deepEqual(stat!.network, {received: null, sent: null})
      assert.equal(stat!.memory.memory_limit, null)
      assert.ok(stat!.memory.memory_usage! > 0)
      return stat!.cpu.cpu_percent!
    }
    const idle = await stats()
    const before = started.length
    const burner = exec(['sh', '-c', 'while :; do :; done'])
    // /stats takes its rate over two samples 500 ms apart: started before them, the burner fills that time.
    await eventually('the burner started', 10_000, async () => (started.length > before ? true : undefined), 20)
    const busy = await stats()
    burner.close()
    assert.ok(idle < 20 && busy > 40, `idle ${idle}, busy ${busy}`)
  })

  it('pauses the output of a client that reads nothing, then closes it and ends the command', async () => {
    const before = started.length
    const ws = exec(['yes', 'a line of output that fills the socket'])
    await once(ws, 'open')
    // The client stops reading: its socket's buffers fill, then the node's.
    ws.pause()
    await eventually('the command started', 10_000, async () => (started.length > before ? true : undefined), 20)
    const command = started.at(-1)!
    for (let i = 0; i < 200 && !command.ended; i++) await sleep(50)
    assert.ok(command.ended, 'the command was ended')
    // Bounded: the backlog, plus what the kernel's socket buffers and the pipe held.
    const {produced} = command
    assert.ok(produced > EXEC_BACKLOG_BYTES && produced < EXEC_BACKLOG_BYTES + 32 * 1024 * 1024, `${produced} bytes`)
    ws.resume()
    const [code] = (await once(ws, 'close')) as [number]
    assert.ok(code === 1013 || code === 1006, `closed with ${code}`)
  })
})
