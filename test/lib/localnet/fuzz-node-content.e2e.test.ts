/**
 * The bounded fuzzer (fixed seed, a number of inputs) extended to the node API and the content store's uploads
 * (issue 42): mutated WebSocket requests and REST calls at `<node>.node.localhost`, and mutated multipart
 * bodies. After each, the localnet (a child process) still runs and answers getHealth within a second, and
 * nothing is answered 500 (every bad input has its own refusal).
 */
import {strict as assert} from 'node:assert'
import type {ChildProcessWithoutNullStreams} from 'node:child_process'
import {once} from 'node:events'
import {request} from 'node:http'

import {Keypair} from '@solana/web3.js'
import bs58 from 'bs58'
import WebSocket from 'ws'

import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {type CliSandbox, cliSandbox, spawnForegroundLocalnet} from '../../helpers/cli-localnet.js'
import {prng} from '../../helpers/eventually.js'

const SEED = 0x42_42_42
const SOCKET_INPUTS = 300
const REST_INPUTS = 300
const UPLOADS = 300

describe('localnet fuzzer: node API and content uploads', function () {
  this.timeout(180_000)
  const random = prng(SEED)
  const int = (n: number) => Math.floor(random() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T
  let box: CliSandbox
  let child: ChildProcessWithoutNullStreams
  let status: LocalnetStatus
  let exited = false
  let node = ''
  let gatewayPort = 0

  before(async () => {
    box = cliSandbox()
    // Host processes: the node (and its API) runs whether or not podman works here; no job is posted.
    ;({child, status} = await spawnForegroundLocalnet(box.dataDir, box.env, ['--runtime', 'host', '--gpus', '0']))
    child.on('exit', () => (exited = true))
    assert.ok(status.node && 'address' in status.node, `the node is off: ${JSON.stringify(status.node)}`)
    node = status.node.address
    gatewayPort = Number(new URL(status.gatewayUrl!).port)
  })
  after(async () => {
    child?.kill('SIGTERM')
    if (child && !exited) await once(child, 'exit')
    await box?.cleanup()
  })

  async function assertAlive(what: string): Promise<void> {
    assert.equal(exited, false, `the localnet exited after ${what}`)
    const res = await fetch(status.rpcUrl!, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: '{"jsonrpc":"2.0","id":0,"method":"getHealth"}',
      signal: AbortSignal.timeout(1000),
    })
    assert.equal(((await res.json()) as {result: string}).result, 'ok', `getHealth after ${what}`)
  }

  /** A base58 text: a key, a signature, or something near one (too long, a wrong letter, empty). */
  function base58ish(): string {
    switch (int(7)) {
      case 0:
        return Keypair.generate().publicKey.toBase58()
      case 1:
        return bs58.encode(Keypair.generate().secretKey)
      case 2:
        return pick(['z', '1', '2'])!.repeat(1 + int(20_000))
      case 3:
        return `${Keypair.generate().publicKey.toBase58().slice(0, 40)}${pick(['0', 'O', 'I', 'l', '+', ':'])}`
      case 4:
        return ''
      case 5:
        return node
      default:
        return bs58.encode(Buffer.from(Array.from({length: int(100)}, () => int(256))))
    }
  }

  /** A header: gpunet's form, the network CLI's, a login message's, or noise, with a signature of some shape. */
  function header(): unknown {
    const message = pick([
      'Hello Nosana Node!',
      `gpunet-node-api action=${pick(['read', 'stop', 'exec', 'x'])} node=${node} job=${base58ish()} at=${Date.now()}`,
      `service_secret_${Math.floor(Date.now() / 1000)}`,
      `nosana_secret_${int(2 ** 31)}`,
      'x'.repeat(int(5000)),
      '',
    ])
    const time = pick(['', `:${Date.now()}`, ':soon', `:${Date.now() + 10 ** 9}`, ':1:2'])
    return pick([`${message}:${base58ish()}${time}`, message, null, 42, {nested: [message]}, base58ish()])
  }

  it('sends mutated node-API socket requests: the localnet alive after each', async () => {
    for (let i = 0; i < SOCKET_INPUTS; i++) {
      const request = {
        path: pick(['/flog', '/log', '/status', '/nope', '', null]),
        header: header(),
        body: pick([
          {jobAddress: base58ish(), address: base58ish(), opId: pick([undefined, 'count', 'system', 7])},
          {},
          null,
          [base58ish()],
          'text',
        ]),
      }
      let text = JSON.stringify(request)
      if (random() < 0.1) text = text.slice(0, int(text.length))
      const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/`, {
        headers: {host: `${node}.node.localhost:${gatewayPort}`},
      })
      await once(ws, 'open')
      ws.send(random() < 0.05 ? Buffer.from(Array.from({length: int(2000)}, () => int(256))) : text)
      const [code] = (await Promise.race([
        once(ws, 'close'),
        new Promise((resolve) => setTimeout(() => resolve([0]), 200)),
      ])) as [number]
      ws.terminate()
      const what = `socket request #${i} ${text.slice(0, 120)}`
      assert.notEqual(code, 1011, `${what} closed with an internal error`)
      await assertAlive(what)
    }
  })

  it('sends mutated node-API REST calls: never 500, the localnet alive after each', async () => {
    for (let i = 0; i < REST_INPUTS; i++) {
      const job = base58ish().slice(0, 200)
      const path = pick([
        `/job/${job}/${pick(['info', 'endpoints', 'results', 'stop', 'exec', ''])}`,
        '/',
        `/job/${job}`,
        `/${'%'.repeat(int(3))}${job}`,
      ])
      const method = pick(['GET', 'POST', 'PUT', 'DELETE'])
      const auth = header()
      const headers: Record<string, string> = {host: `${node}.node.localhost:${gatewayPort}`}
      if (typeof auth === 'string') headers.authorization = auth.slice(0, 12_000)
      const what = `${method} ${path.slice(0, 120)} #${i}`
      const status = await new Promise<number>((resolve, reject) => {
        const req = request({host: '127.0.0.1', port: gatewayPort, method, path, headers}, (res) => {
          // The info stream stays open while a job runs: its status is enough.
          res.destroy()
          resolve(res.statusCode ?? 0)
        })
        req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve(0) : reject(error)))
        req.end()
      })
      assert.notEqual(status, 500, `${what} answered 500`)
      await assertAlive(what)
    }
  })

  /** One multipart body: some parts, each mutated a little (a cut, odd headers, a boundary inside). */
  function upload(): {body: Buffer; type: string} {
    const boundary = pick(['B', 'xYz-123', '----WebKitFormBoundary7MA4YWxkTrZu0gW', '"quoted"'])
    const plain = boundary.replaceAll('"', '')
    const parts: string[] = []
    const count = pick([0, 1, 1, 2, 3, 99, 100, 101, 150])
    for (let p = 0; p < count; p++) {
      const headers = pick([
        `content-disposition: form-data; name="file"; filename="f${p}"`,
        `Content-Disposition: form-data; name="file"; filename="a%22b"`,
        'content-disposition: form-data; name="text"',
        'content-disposition: attachment',
        `x-long: ${'h'.repeat(int(10_000))}`,
        '',
      ])
      const content = pick(['{"version":"0.1"}', 'x'.repeat(int(3000)), `--${plain}`, '\r\n', ''])
      parts.push(`--${plain}\r\n${headers}\r\n\r\n${content}\r\n`)
    }
    let text = `${pick(['', 'preamble\r\n'])}${parts.join('')}${pick([`--${plain}--\r\n`, '', `--${plain}`])}`
    if (random() < 0.15) text = text.slice(0, int(text.length))
    const type = pick([
      `multipart/form-data; boundary=${boundary}`,
      `multipart/form-data; boundary=${boundary}; charset=utf-8`,
      'multipart/form-data',
      'application/json',
      `multipart/mixed; boundary=${boundary}`,
    ])
    return {body: Buffer.from(text), type}
  }

  it('sends mutated multipart uploads to add and pinFileToIPFS: never 500, the localnet alive after each', async () => {
    const base = status.contentStoreUrl!
    for (let i = 0; i < UPLOADS; i++) {
      const {body, type} = upload()
      const path = pick(['/api/v0/add', '/pinning/pinFileToIPFS'])
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: {'content-type': type, authorization: 'Bearer fuzz'},
        body: new Uint8Array(body),
      })
      await res.arrayBuffer()
      const what = `${path} upload #${i} (${type}, ${body.length} bytes) ${body.toString('latin1', 0, 100)}`
      assert.ok(res.status < 500, `${what} answered ${res.status}`)
      await assertAlive(what)
    }
  })
})
