/**
 * A bounded fuzzer with a fixed seed for the client's readers of what strangers send (issue 43): frames of a node's
 * API (read alone, then through `jobLogs` against a stand-in node API and RPC server on 127.0.0.1), and results
 * through a stand-in gateway (read, shown, written as --out files). Whatever comes in, nothing throws but a
 * GpunetError, every line handed on is text with a valid time, and printed text holds no control sequence.
 */
import {strict as assert} from 'node:assert'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {Keypair} from '@solana/web3.js'
import {WebSocketServer} from 'ws'

import {isGpunetError} from '../../../src/lib/errors.js'
import {ContentClient} from '../../../src/lib/ipfs/client.js'
import {jobLogs, type LogLine} from '../../../src/lib/job/logs.js'
import {marketNetwork} from '../../../src/lib/market/connect.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {readResult, resultText} from '../../../src/lib/results/job-result.js'
import {tooDeepAt} from '../../../src/lib/text/nesting.js'
import {readFrame} from '../../../src/lib/node-api/client.js'
import {resultFiles} from '../../../src/lib/results/result-files.js'
import {stripControls} from '../../../src/lib/text/terminal-text.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {putJobAccount, putRunAccount, seedNetwork} from '../../helpers/standin-network.js'
import {cidDigest, ipfsCid, startStandinRpc, type StandinRpc} from '../../helpers/standin.js'
import {hasControls} from '../../helpers/terminal.js'
import {prng} from '../../helpers/eventually.js'

const SEED = 0x43_43_43
const FRAMES_ALONE = 4000
const FRAMES_THROUGH_LOGS = 1200
const RESULTS = 300

/** Stands for arrays nested `levels` deep until `deepened` writes them into the text (no stack is used). */
const nested = (levels: number): string => `DEEP:${levels}:DEEP`
const deepened = (text: string): string =>
  text.replace(/"DEEP:(\d+):DEEP"/g, (_m, n: string) => `${'['.repeat(Number(n))}${']'.repeat(Number(n))}`)

/** The inputs, drawn from one seeded generator. */
function generator(seed: number) {
  const random = prng(seed)
  const int = (n: number) => Math.floor(random() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T
  const hostileText = () =>
    pick([
      'plain line',
      '\x1b]0;title\x07',
      '\x1b]52;c;cm0gLXJmIH4=\x1b\\',
      '\x1b[2K\x1b[1A\x1b[32m✔ fake\x1b[0m',
      '\x9b31m\x9d0;x\x9c',
      '\x00\x01\x7f\x85\r',
      'é ✔ 𝄞',
      '\ud800',
      'x'.repeat(int(5000)),
      '',
    ]) + pick(['', '\n', '\t', '\x1b'])
  const anyValue = (depth = 0): unknown => {
    switch (int(depth > 3 ? 8 : 11)) {
      case 0:
        return null
      case 1:
        return random() < 0.5
      case 2:
        return pick([0, -1, 1.5, 1e20, -1e20, 8.64e15, 8.64e15 + 1, Number.MAX_SAFE_INTEGER + 2, 1e308])
      case 3:
      case 4:
        return hostileText()
      case 5:
        return nested(pick([3, 63, 64, 65, 200, 20_000]))
      case 6:
        return pick(['__proto__', 'constructor', 'toString'])
      case 7:
        return Date.now() + int(100_000)
      case 8:
        return Array.from({length: int(4)}, () => anyValue(depth + 1))
      default: {
        const object: Record<string, unknown> = {}
        for (let i = int(4); i > 0; i--)
          object[pick(['type', 'payload', 'log', 'message', 'x', '__proto__'])] = anyValue(depth + 1)
        return object
      }
    }
  }
  const entry = (): Record<string, unknown> => {
    const base: Record<string, unknown> = {
      opId: pick(['op1', 'op2', hostileText(), 7, null]),
      group: 'g',
      type: pick(['container', 'container', 'info', 'error', 'log', 'success', 'stop', 'process', hostileText()]),
      timestamp: pick([Date.now() + int(10_000), Date.now(), 1e20, -1e20, '1700000000000', null, 1.5, 8.64e15]),
      message: random() < 0.6 ? hostileText() : anyValue(),
      log: random() < 0.6 ? hostileText() : anyValue(),
      method: 'x',
    }
    if (random() < 0.3) base.seq = pick([1, int(1000), -1, 1.5, 1e300, '3', null])
    if (random() < 0.3) base.stream = pick(['stdout', 'stderr', 'other', 1])
    // Drop or replace members at random.
    for (const key of Object.keys(base)) {
      const roll = random()
      if (roll < 0.08) delete base[key]
      else if (roll < 0.16) base[key] = anyValue()
    }
    return base
  }
  const frame = (): string => {
    const path = pick(['flog', 'flog', 'log', 'state', 'other', 3, null])
    const data = deepened(JSON.stringify(random() < 0.9 ? entry() : anyValue()))
    switch (int(12)) {
      case 0:
        return data.slice(0, int(data.length))
      case 1:
        return JSON.stringify({path, data: data.slice(0, int(data.length))})
      case 2:
        // data as JSON rather than JSON text (written as text: the deep ones would overflow JSON.stringify here)
        return `{"path":${JSON.stringify(path)},"data":${data}}`
      case 3:
        return deepened(JSON.stringify(anyValue()))
      case 4:
        return String.fromCharCode(...Array.from({length: int(40)}, () => int(256)))
      default:
        return JSON.stringify({path, data})
    }
  }
  /** A result document as text: one of the formats, mutated, or no JSON at all. */
  const result = (): string => {
    const now = 1_700_000_000_000
    const op = () => ({
      operationId: pick(['train', 'x', 'x.stdout', '../up', '', hostileText(), 3]),
      providerId: 'container',
      group: 'g',
      status: pick(['success', 'failed', 'stopped', hostileText(), null]),
      startTime: pick([now, 1e20, -1, null, 'soon']),
      endTime: pick([now, 1e20, null]),
      exitCode: pick([0, 1, -1, 1e20, null, '0']),
      logs: Array.from({length: int(6)}, () =>
        random() < 0.8
          ? {
              type: pick(['stdout', 'stderr', 'log', 'x']),
              log: hostileText(),
              timestamp: pick([now, '2023', 1e20, null]),
            }
          : anyValue(),
      ),
      results: random() < 0.3 ? anyValue() : undefined,
      diagnostics: random() < 0.5 ? {reason: {hostShutDown: false}} : anyValue(),
    })
    const documents = [
      () => ({
        status: pick(['success', 'failed']),
        startTime: now,
        endTime: now,
        opStates: Array.from({length: int(4)}, op),
      }),
      () => ({
        nosana: {run: 'x'},
        results: {
          hello: [
            'success',
            [
              {
                cmd: 'echo',
                log: [
                  [1, hostileText()],
                  [2, 'e'],
                ],
                exitCode: 0,
              },
            ],
          ],
        },
      }),
      () => ({
        job: 'x',
        node: 'y',
        status: 'success',
        ops: [{id: hostileText(), exitCode: 0, stdout: hostileText(), stderr: ''}],
      }),
      () => anyValue(),
    ]
    const document = pick(documents)() as Record<string, unknown> | unknown
    if (typeof document === 'object' && document !== null && random() < 0.3) {
      ;(document as Record<string, unknown>)[pick(['opStates', 'results', 'ops', 'status'])] = anyValue()
    }
    const text = deepened(JSON.stringify(document) ?? 'null')
    return random() < 0.1 ? text.slice(0, int(text.length)) : text
  }
  return {frame, result, random, int}
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** The reasons every input failed, if any did: the first few, with their inputs. */
function failures(list: string[]): string {
  return list.slice(0, 5).join('\n')
}

describe('client readers fuzzer (fixed seed)', function () {
  this.timeout(120_000)

  it(`readFrame takes ${FRAMES_ALONE} mutated frames without throwing, and hands on nothing past the nesting limit`, () => {
    const {frame} = generator(SEED)
    const bad: string[] = []
    for (let i = 0; i < FRAMES_ALONE; i++) {
      const text = frame()
      try {
        const read = readFrame(text)
        if (!('skip' in read) && tooDeepAt(read.data) !== null) bad.push(`#${i}: too deep handed on`)
      } catch (error) {
        bad.push(`#${i}: ${(error as Error).message}: ${text.slice(0, 120)}`)
      }
    }
    assert.deepEqual(bad, [], failures(bad))
  })

  it(`jobLogs reads ${FRAMES_THROUGH_LOGS} mutated frames from a stand-in node over several connections, and ends with the job`, async () => {
    const {frame} = generator(SEED + 1)
    const rpc: StandinRpc = await startStandinRpc()
    const keypair = Keypair.generate()
    const wallet = walletFromBytes(keypair.secretKey)
    seedNetwork(rpc, 'devnet', keypair.publicKey)
    const definition = new TextEncoder().encode('{"version":"0.1","type":"container","ops":[]}')
    const cid = await ipfsCid(definition)
    const job = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {ipfsJob: cidDigest(cid), timeout: 600n, state: 0, payer: keypair.publicKey})
    putRunAccount(rpc, 'devnet', job, Keypair.generate().publicKey, keypair.publicKey, Math.floor(Date.now() / 1000))
    const server = createServer()
    const wss = new WebSocketServer({server})
    const perConnection = FRAMES_THROUGH_LOGS / 4
    let sent = 0
    wss.on('connection', (ws) => {
      ws.once('message', () => {
        for (let i = 0; i < perConnection && sent < FRAMES_THROUGH_LOGS; i++, sent++) ws.send(frame())
        // The node drops the connection; once every frame is out, the job ends (with no result).
        if (sent >= FRAMES_THROUGH_LOGS) {
          putJobAccount(rpc, 'devnet', job, {
            ipfsJob: cidDigest(cid),
            timeout: 600n,
            state: 2,
            payer: keypair.publicKey,
          })
        }
        setTimeout(() => ws.terminate(), 50)
      })
    })
    const url = await listen(server)
    const lines: LogLine[] = []
    const notices: string[] = []
    try {
      const net = marketNetwork(
        resolveSettings({
          network: 'devnet',
          flags: {rpcUrl: rpc.url},
          env: {GPUNET_NODE_API_URL: url, GPUNET_IPFS_GATEWAY: url, XDG_CONFIG_HOME: '/nonexistent-gpunet-config'},
        }),
      )
      const end = await jobLogs(net, job, {
        follow: true,
        pollMs: 100,
        wallet: async () => wallet,
        line: (line) => void lines.push(line),
        notice: (text) => void notices.push(text),
      })
      assert.equal(end.view.status, 'COMPLETED')
      assert.equal(sent, FRAMES_THROUGH_LOGS)
      assert.ok(lines.length > 0, 'some frames were good lines')
      for (const line of lines) {
        assert.equal(typeof line.line, 'string')
        assert.ok(line.op === null || typeof line.op === 'string', JSON.stringify(line.op))
        assert.ok(!Number.isNaN(Date.parse(line.time)), line.time)
        assert.equal(hasControls(stripControls(line.line)), false)
      }
      assert.ok(
        notices.some((n) => n.startsWith('Skipped a frame from the node')),
        'bad frames were noticed',
      )
      for (const notice of notices) assert.equal(typeof notice, 'string')
    } finally {
      for (const client of wss.clients) client.terminate()
      await new Promise((resolve) => server.close(resolve))
      await rpc.close()
    }
  })

  it(`reads, shows and lays out as files ${RESULTS} mutated results from a stand-in gateway without throwing`, async () => {
    const {result} = generator(SEED + 2)
    const content = new Map<string, Uint8Array>()
    const server = createServer((req, res) => {
      const found = content.get(req.url?.replace('/ipfs/', '') ?? '')
      if (!found) return void res.writeHead(404).end()
      res.writeHead(200).end(found)
    })
    const url = await listen(server)
    const client = new ContentClient(null, url, undefined, 1024 * 1024)
    const bad: string[] = []
    try {
      for (let i = 0; i < RESULTS; i++) {
        const text = result()
        const bytes = new TextEncoder().encode(text)
        const cid = await ipfsCid(bytes)
        content.set(cid, bytes)
        try {
          let kept: Uint8Array | undefined
          const fields = await readResult(client, {result: cid}, (b) => (kept = b))
          assert.deepEqual(kept, bytes)
          const shown = resultText(fields)
          if (shown !== null) assert.equal(hasControls(stripControls(shown)), false)
          JSON.stringify(fields)
          const {files, manifest} = resultFiles(fields.resultView, fields.resultContent, kept)
          const names = [...files.keys()].map((n) => n.toLowerCase())
          assert.equal(new Set(names).size, names.length, 'no two files share a name')
          for (const name of names) assert.match(name, /^[a-z0-9_-][a-z0-9._-]*$/)
          assert.equal(manifest.operations.length, Math.min(fields.resultView?.ops.length ?? 0, 256))
        } catch (error) {
          if (!isGpunetError(error))
            bad.push(`#${i}: ${(error as Error).stack?.split('\n', 2).join(' ')}: ${text.slice(0, 120)}`)
        }
      }
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
    assert.deepEqual(bad, [], failures(bad))
  })
})
