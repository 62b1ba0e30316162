/**
 * Every place a localnet takes a key or a signature from a stranger (issue 42, findings 1 and 2): RPC address
 * parameters, WebSocket subscriptions, the node API and the secrets login. 60,000 base58 characters once froze
 * the whole process for seconds, decoded before any length check; each entry point must refuse them without
 * decoding anything, which a spy on the one decoder (base58-text.ts) shows. A well-formed key still reaches it.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {randomBytes} from 'node:crypto'
import {request} from 'node:http'

import {Keypair, type PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'
import WebSocket from 'ws'

import {base58Decoder} from '../../../src/lib/text/base58-text.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {post} from '../../helpers/node.js'

/** 60,000 base58 characters: a quadratic decode of these took 6-8 s. */
const LONG = 'z'.repeat(60_000)
/** One character past the longest key (44) and the longest signature (88). */
const KEY_45 = 'z'.repeat(45)
const SIGNATURE_89 = 'z'.repeat(89)

describe('base58 entry points: length and alphabet checked before any decoding', function () {
  this.timeout(60_000)
  const t = useLocalnet({node: {gatewayPort: 0, runtime: 'host', gpus: 0}})
  const decoded: string[] = []
  const decode = base58Decoder.decode
  before(() => {
    base58Decoder.decode = (text) => {
      decoded.push(text)
      return decode(text)
    }
  })
  after(() => {
    base58Decoder.decode = decode
  })

  async function rpc(method: string, params: unknown[]): Promise<{error?: {code: number; message: string}}> {
    const res = await fetch(t.ln.runtime.rpcUrl, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({jsonrpc: '2.0', id: 1, method, params}),
    })
    return (await res.json()) as {error?: {code: number; message: string}}
  }

  async function ws(method: string, params: unknown[]): Promise<{error?: {code: number; message: string}}> {
    const socket = new WebSocket(t.ln.runtime.wsUrl)
    await once(socket, 'open')
    socket.send(JSON.stringify({jsonrpc: '2.0', id: 1, method, params}))
    const [raw] = (await once(socket, 'message')) as [Buffer]
    socket.close()
    return JSON.parse(raw.toString()) as {error?: {code: number; message: string}}
  }

  const nodeAddress = () => (t.ln.runtime.node as {address: string}).address
  const gatewayPort = () => Number(new URL(t.ln.runtime.gatewayUrl!).port)

  /** One node-API WebSocket request; resolves with the close code and reason. */
  async function nodeSocket(message: unknown): Promise<{code: number; reason: string}> {
    const socket = new WebSocket(`ws://127.0.0.1:${gatewayPort()}/`, {
      headers: {host: `${nodeAddress()}.node.localhost:${gatewayPort()}`},
    })
    await once(socket, 'open')
    socket.send(JSON.stringify(message))
    const [code, reason] = (await once(socket, 'close')) as [number, Buffer]
    return {code, reason: reason.toString()}
  }

  /** One node-API REST call with an authorization header. */
  function nodeRest(path: string, authorization: string): Promise<{status: number; body: string}> {
    return new Promise((resolve, reject) => {
      const headers = {host: `${nodeAddress()}.node.localhost:${gatewayPort()}`, authorization}
      const req = request({host: '127.0.0.1', port: gatewayPort(), path, headers}, (res) => {
        let body = ''
        res.on('data', (chunk: Buffer) => (body += chunk.toString()))
        res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
      })
      req.on('error', reject)
      req.end()
    })
  }

  async function login(params: Record<string, unknown>): Promise<{status: number; body: string}> {
    const res = await fetch(`${t.ln.runtime.secretsUrl}/login`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify(params),
    })
    return {status: res.status, body: await res.text()}
  }

  const someKey = () => Keypair.generate().publicKey.toBase58()
  const signature = 'z'.repeat(87)
  type Answer =
    {error?: {code: number; message: string}} | {code: number; reason: string} | {status: number; body: string}
  const refusedParam = (answer: Answer) => {
    assert.equal((answer as {error?: {code: number}}).error?.code, -32602, JSON.stringify(answer))
  }
  let job: PublicKey

  /** Each entry point: what it reads (a key or a signature), how to send it a text, and its refusal. */
  const entryPoints: {
    name: string
    kind: 'key' | 'signature'
    send(x: string): Promise<Answer>
    refused(a: Answer): void
  }[] = [
    {name: 'getBalance', kind: 'key', send: (x) => rpc('getBalance', [x]), refused: refusedParam},
    {
      name: 'getAccountInfo',
      kind: 'key',
      send: (x) => rpc('getAccountInfo', [x, {encoding: 'base64'}]),
      refused: refusedParam,
    },
    {name: 'getMultipleAccounts', kind: 'key', send: (x) => rpc('getMultipleAccounts', [[x]]), refused: refusedParam},
    {name: 'getProgramAccounts', kind: 'key', send: (x) => rpc('getProgramAccounts', [x]), refused: refusedParam},
    {
      name: 'getTokenAccountsByOwner',
      kind: 'key',
      send: (x) => rpc('getTokenAccountsByOwner', [x, {mint: t.mint.toBase58()}]),
      refused: refusedParam,
    },
    {
      name: 'getTokenAccountBalance',
      kind: 'key',
      send: (x) => rpc('getTokenAccountBalance', [x]),
      refused: refusedParam,
    },
    {name: 'getTokenSupply', kind: 'key', send: (x) => rpc('getTokenSupply', [x]), refused: refusedParam},
    {name: 'requestAirdrop', kind: 'key', send: (x) => rpc('requestAirdrop', [x, 1000]), refused: refusedParam},
    {
      name: 'getRecentPrioritizationFees',
      kind: 'key',
      send: (x) => rpc('getRecentPrioritizationFees', [[x]]),
      refused: refusedParam,
    },
    {name: 'accountSubscribe', kind: 'key', send: (x) => ws('accountSubscribe', [x]), refused: refusedParam},
    {name: 'programSubscribe', kind: 'key', send: (x) => ws('programSubscribe', [x]), refused: refusedParam},
    {name: 'logsSubscribe', kind: 'key', send: (x) => ws('logsSubscribe', [{mentions: [x]}]), refused: refusedParam},
    {
      name: 'node API socket: jobAddress',
      kind: 'key',
      send: (x) => nodeSocket({path: '/flog', header: `m:${signature}`, body: {jobAddress: x}}),
      refused: (a) => assert.deepEqual(a, {code: 1007, reason: 'Invalid job address'}),
    },
    {
      name: 'node API socket: header signature',
      kind: 'signature',
      send: (x) => nodeSocket({path: '/log', header: `Hello Nosana Node!:${x}`, body: {jobAddress: job.toBase58()}}),
      refused: (a) => assert.deepEqual(a, {code: 3000, reason: 'Unauthorized Request: the signature is not base58'}),
    },
    {
      name: 'node API REST: header signature',
      kind: 'signature',
      // A header is at most 16 KiB in Node's HTTP parser: the part of the text that fits.
      send: (x) => nodeRest(`/job/${job.toBase58()}/info`, `Hello Nosana Node!:${x.slice(0, 15_000)}`),
      refused: (a) => assert.deepEqual(a, {status: 401, body: 'Unauthorized Request: the signature is not base58'}),
    },
    {
      name: 'secrets login: address',
      kind: 'key',
      send: (x) => login({address: x, signature, timestamp: 1}),
      refused: (a) => assert.match((a as {body: string}).body, /invalid_address/),
    },
    {
      name: 'secrets login: signature',
      kind: 'signature',
      send: (x) => login({address: someKey(), signature: x, timestamp: 1}),
      refused: (a) => assert.match((a as {body: string}).body, /invalid_signature/),
    },
    {
      name: 'secrets login: job',
      kind: 'key',
      send: (x) => login({address: someKey(), signature: bs58.encode(randomBytes(64)), timestamp: 1, job: x}),
      refused: (a) => assert.match((a as {body: string}).body, /invalid_job/),
    },
  ]

  before(async () => {
    job = await post(t, [{id: 'x', type: 'container/run', args: {image: 'alpine', cmd: 'true'}}])
  })

  for (const {name, kind, send, refused} of entryPoints) {
    it(`${name}: refuses 60,000 characters, one past the longest, and a non-base58 one, decoding none of them`, async () => {
      const justTooLong = kind === 'signature' ? SIGNATURE_89 : KEY_45
      for (const text of [LONG, justTooLong, `${someKey().slice(0, 40)}0OIl`]) {
        decoded.length = 0
        refused(await send(text))
        assert.deepEqual(
          decoded.filter((d) => d === text || d.length > 88).map((d) => d.length),
          [],
          `${name} decoded ${text.length} characters`,
        )
      }
      // The entry point decodes through the spied decoder: a text of the right shape reaches it.
      const wellFormed = kind === 'signature' ? 'z'.repeat(88) : someKey()
      decoded.length = 0
      await send(wellFormed)
      assert.ok(decoded.includes(wellFormed), `${name} decoded ${JSON.stringify(decoded)}`)
    })
  }

  it('a well-formed key still goes through the same decoder', async () => {
    decoded.length = 0
    const key = someKey()
    const answer = (await rpc('getBalance', [key])) as {result?: {value: number}}
    assert.equal(answer.result?.value, 0)
    assert.deepEqual(decoded, [key])
  })
})
