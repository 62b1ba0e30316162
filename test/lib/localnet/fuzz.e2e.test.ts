/**
 * A bounded fuzzer with a fixed seed (issue 22): mutated transactions and JSON-RPC bodies, over HTTP and
 * WebSocket, to a localnet in a child process. After each, the process still runs and answers getHealth
 * within a second, and no answer is -32603 (an internal error is a bug: every bad input has its own error).
 */
import {strict as assert} from 'node:assert'
import type {ChildProcessWithoutNullStreams} from 'node:child_process'
import {once} from 'node:events'

import {
  Connection,
  Keypair,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'
import {base58btc} from 'multiformats/bases/base58'
import WebSocket from 'ws'

import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {readKeypair} from '../../../src/lib/keys/wallet.js'
import {type CliSandbox, cliSandbox, spawnForegroundLocalnet} from '../../helpers/cli-localnet.js'
import {prng} from '../../helpers/eventually.js'

const SEED = 0x22_22_22
const TRANSACTIONS = 1500
const BODIES = 1500
const MESSAGES = 1000

const METHODS = [
  'getHealth',
  'getBalance',
  'getAccountInfo',
  'getMultipleAccounts',
  'getProgramAccounts',
  'getSignatureStatuses',
  'sendTransaction',
  'simulateTransaction',
  'getFeeForMessage',
  'getTokenAccountsByOwner',
  'getTokenAccountBalance',
  'getRecentPrioritizationFees',
  'isBlockhashValid',
  'requestAirdrop',
  'getMinimumBalanceForRentExemption',
  'accountSubscribe',
  'programSubscribe',
  'signatureSubscribe',
  'accountUnsubscribe',
  'constructor',
  '__proto__',
]

/** Stands for arrays nested `levels` deep until `deepened` writes them into the text (no stack overflows here). */
function nested(levels: number): string {
  return `DEEP:${levels}:DEEP`
}

/** JSON text with each `nested` stand-in replaced by its nested arrays. */
function deepened(text: string): string {
  return text.replace(/"DEEP:(\d+):DEEP"/g, (_m, n: string) => `${'['.repeat(Number(n))}${']'.repeat(Number(n))}`)
}

describe('localnet fuzzer', function () {
  this.timeout(120_000)
  const random = prng(SEED)
  const int = (n: number) => Math.floor(random() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T
  let box: CliSandbox
  let child: ChildProcessWithoutNullStreams
  let status: LocalnetStatus
  let exited = false
  let seeds: Uint8Array[] = []

  before(async () => {
    box = cliSandbox()
    ;({child, status} = await spawnForegroundLocalnet(box.dataDir, box.env))
    child.on('exit', () => (exited = true))
    const wallet = readKeypair(box.env.GPUNET_WALLET!)
    const {blockhash} = await new Connection(status.rpcUrl!, 'confirmed').getLatestBlockhash()
    const transfer = SystemProgram.transfer({
      fromPubkey: wallet.publicKey,
      toPubkey: Keypair.generate().publicKey,
      lamports: 5,
    })
    const legacy = new Transaction({feePayer: wallet.publicKey, recentBlockhash: blockhash}).add(transfer)
    legacy.sign(wallet)
    const v0 = new VersionedTransaction(
      new TransactionMessage({
        payerKey: wallet.publicKey,
        recentBlockhash: blockhash,
        instructions: [transfer],
      }).compileToV0Message(),
    )
    v0.sign([wallet])
    seeds = [legacy.serialize(), v0.serialize()]
  })
  after(async () => {
    child?.kill('SIGTERM')
    if (child && !exited) await once(child, 'exit')
    await box?.cleanup()
  })

  /** A JSON-RPC exchange over HTTP; the parsed answer, or the raw text when it is not JSON. */
  async function post(body: string): Promise<unknown> {
    const res = await fetch(status.rpcUrl!, {method: 'POST', headers: {'content-type': 'application/json'}, body})
    const text = await res.text()
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }

  /** Fails when the localnet exited or does not answer getHealth within a second. */
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

  function assertNoInternalError(answer: unknown, what: string): void {
    assert.doesNotMatch(JSON.stringify(answer) ?? '', /-32603/, `${what} answered an internal error`)
  }

  /** One mutation of a valid transaction: flipped bytes, a cut, an insertion, or an aliased compact-u16. */
  function mutate(raw: Uint8Array): Uint8Array {
    const bytes = [...raw]
    const kind = int(5)
    const at = int(bytes.length)
    if (kind === 0) for (let i = 0, n = 1 + int(4); i < n; i++) bytes[int(bytes.length)] = int(256)
    else if (kind === 1) bytes.length = at
    else if (kind === 2) bytes.splice(at, 0, ...Array.from({length: 1 + int(8)}, () => int(256)))
    else if (kind === 3) bytes.splice(at, 0, 0x80 | (bytes[at] ?? 0), 0x00)
    else bytes[at] = pick([0x00, 0x7f, 0x80, 0xff])
    return Uint8Array.from(bytes)
  }

  /** A random JSON value, sometimes odd: deep, long, a wrong type. */
  function value(depth = 0): unknown {
    switch (int(depth > 3 ? 5 : 9)) {
      case 0:
        return int(2 ** 32) - 2 ** 31
      case 1:
        return pick([
          '',
          'base58',
          'base64',
          'jsonParsed',
          'bogus',
          '1'.repeat(int(3000)),
          Keypair.generate().publicKey.toBase58(),
        ])
      case 2:
        return null
      case 3:
        return pick([true, false, 1e308, -0, 0.5])
      case 4:
        return nested(1 + int(6000))
      case 5:
        return Array.from({length: int(4)}, () => value(depth + 1))
      case 6:
        return {
          encoding: value(depth + 1),
          filters: [{memcmp: {offset: int(10), bytes: value(depth + 1)}}, {dataSize: value(depth + 1)}],
        }
      case 7:
        return Object.fromEntries(
          Array.from({length: int(4)}, () => [
            pick(['encoding', 'commitment', 'filters', 'sigVerify', 'dataSlice']),
            value(depth + 1),
          ]),
        )
      default:
        return base58btc.baseEncode(mutate(pick(seeds)))
    }
  }

  it('sends mutated transactions over HTTP: each refused or answered, never -32603, the localnet alive', async () => {
    for (let i = 0; i < TRANSACTIONS; i++) {
      const bytes = mutate(pick(seeds))
      const encoding = pick(['base58', 'base64'] as const)
      const text = encoding === 'base64' ? Buffer.from(bytes).toString('base64') : base58btc.baseEncode(bytes)
      const method = pick(['sendTransaction', 'simulateTransaction'])
      const what = `${method} #${i}`
      const params = [text, {encoding, sigVerify: random() < 0.5, skipPreflight: random() < 0.3}]
      assertNoInternalError(await post(JSON.stringify({jsonrpc: '2.0', id: i, method, params})), what)
      await assertAlive(what)
    }
  })

  it('sends mutated JSON-RPC bodies over HTTP: never -32603, the localnet alive', async () => {
    for (let i = 0; i < BODIES; i++) {
      const request = {
        jsonrpc: pick(['2.0', '2.0', '1.0', undefined]),
        id: random() < 0.9 ? i : value(),
        method: pick(METHODS),
        params: value(),
      }
      let body = deepened(JSON.stringify(random() < 0.1 ? Array.from({length: 1 + int(3)}, () => request) : request))
      if (random() < 0.1) body = body.slice(0, int(body.length))
      const what = `body #${i} ${body.slice(0, 120)}`
      assertNoInternalError(await post(body), what)
      await assertAlive(what)
    }
  })

  it('sends mutated messages over WebSocket: never -32603, the localnet alive', async () => {
    let ws = new WebSocket(status.wsUrl!)
    await once(ws, 'open')
    const answers: string[] = []
    ws.on('message', (raw) => answers.push(String(raw)))
    for (let i = 0; i < MESSAGES; i++) {
      if (ws.readyState !== WebSocket.OPEN) {
        ws = new WebSocket(status.wsUrl!)
        await once(ws, 'open')
        ws.on('message', (raw) => answers.push(String(raw)))
      }
      const request = {jsonrpc: '2.0', id: random() < 0.9 ? i : value(), method: pick(METHODS), params: value()}
      const message = deepened(JSON.stringify(request))
      ws.send(random() < 0.1 ? message.slice(0, int(message.length)) : message)
      const what = `message #${i} ${message.slice(0, 120)}`
      await assertAlive(what)
      for (const answer of answers.splice(0)) assertNoInternalError(answer, what)
    }
    ws.close()
  })
})
