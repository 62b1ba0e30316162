/**
 * What @solana/kit and other clients ask of a node beyond web3.js (issue 21): slotSubscribe, rootSubscribe,
 * signatureSubscribe with enableReceivedNotification, logsSubscribe, getTransaction, and getSignatureStatuses'
 * searchTransactionHistory, written from Solana's RPC documentation and spoken over a raw WebSocket.
 */
import {strict as assert} from 'node:assert'

import {Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction} from '@solana/web3.js'
import WebSocket from 'ws'

import {MAX_SUBSCRIPTIONS} from '../../../src/lib/localnet/rpc/websocket.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {rpc} from '../../helpers/json-rpc.js'

interface Message {
  id?: number
  result?: unknown
  error?: {code: number; message: string}
  method?: string
  params?: {result: unknown; subscription: number}
}

/** A WebSocket client that keeps every message, to wait for the ones a test expects. */
class Socket {
  readonly messages: Message[] = []
  private waiters: (() => void)[] = []
  private nextId = 1
  constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      this.messages.push(JSON.parse(String(raw)) as Message)
      for (const wake of this.waiters.splice(0)) wake()
    })
  }
  static async open(url: string): Promise<Socket> {
    const ws = new WebSocket(url)
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
    return new Socket(ws)
  }
  async until<T>(what: string, find: (messages: Message[]) => T | undefined, ms = 5000): Promise<T> {
    const deadline = Date.now() + ms
    for (;;) {
      const found = find(this.messages)
      if (found !== undefined) return found
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(this.messages)}`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 50)
      })
    }
  }
  async call(method: string, params: unknown[] = []): Promise<Message> {
    const id = this.nextId++
    this.ws.send(JSON.stringify({jsonrpc: '2.0', id, method, params}))
    return this.until(method, (messages) => messages.find((m) => m.id === id))
  }
  notifications(subscription: number): unknown[] {
    return this.messages.filter((m) => m.params?.subscription === subscription).map((m) => m.params!.result)
  }
}

describe('localnet: subscriptions and transaction history', function () {
  this.timeout(30_000)
  const t = useLocalnet({slotMs: 100})
  let socket: Socket

  beforeEach(async () => {
    socket = await Socket.open(t.ln.runtime.wsUrl)
  })
  afterEach(() => socket.ws.close())

  async function transfer(from: Keypair, lamports = 1_000_000) {
    const tx = new Transaction({feePayer: from.publicKey, ...t.ln.node.chain.latestBlockhash()}).add(
      SystemProgram.transfer({fromPubkey: from.publicKey, toPubkey: Keypair.generate().publicKey, lamports}),
    )
    tx.sign(from)
    return {tx, signature: tx.signatures[0]!.signature!}
  }
  const funded = () => {
    const kp = Keypair.generate()
    t.ln.node.fund(kp.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL)})
    return kp
  }
  const send = (tx: Transaction) =>
    rpc(t.ln.runtime.rpcUrl, 'sendTransaction', [tx.serialize().toString('base64'), {encoding: 'base64'}])

  it('slotSubscribe announces each new slot as {parent, root, slot}, and rootSubscribe its root', async () => {
    const slot = (await socket.call('slotSubscribe')).result as number
    const root = (await socket.call('rootSubscribe')).result as number
    const slots = await socket.until('three slot notifications', () => {
      const seen = socket.notifications(slot) as {parent: number; root: number; slot: number}[]
      return seen.length >= 3 ? seen : undefined
    })
    for (const [i, n] of slots.entries()) {
      assert.equal(n.parent, n.slot - 1)
      assert.equal(n.root, n.slot)
      if (i > 0) assert.ok(n.slot > slots[i - 1]!.slot, 'slots only grow')
    }
    const roots = await socket.until('a root', () => {
      const seen = socket.notifications(root) as number[]
      return seen.length > 0 ? seen : undefined
    })
    assert.equal(typeof roots[0], 'number')
    assert.deepEqual((await socket.call('slotUnsubscribe', [slot])).result, true)
    assert.deepEqual((await socket.call('rootUnsubscribe', [root])).result, true)
    const count = socket.messages.length
    // Fixed: a window of several slots in which nothing may come.
    await new Promise((resolve) => setTimeout(resolve, 400))
    assert.equal(socket.messages.length, count, 'nothing after unsubscribing')
  })

  it('signatureSubscribe with enableReceivedNotification sends receivedSignature, then the status', async () => {
    const payer = funded()
    const {tx, signature} = await transfer(payer)
    const base58 = (await import('bs58')).default.encode(signature)
    const sub = (
      await socket.call('signatureSubscribe', [base58, {commitment: 'confirmed', enableReceivedNotification: true}])
    ).result as number
    const sent = await send(tx)
    assert.equal(sent.result, base58, JSON.stringify(sent.error))
    const values = await socket.until('two notifications', () => {
      const seen = socket.notifications(sub) as {value: unknown}[]
      return seen.length >= 2 ? seen.map((n) => n.value) : undefined
    })
    assert.deepEqual(values, ['receivedSignature', {err: null}])
  })

  it('logsSubscribe sends the logs of transactions that mention an address, and of all with "all"', async () => {
    const payer = funded()
    const other = funded()
    const mentions = (await socket.call('logsSubscribe', [{mentions: [payer.publicKey.toBase58()]}])).result as number
    const all = (await socket.call('logsSubscribe', ['all'])).result as number
    const mine = await transfer(payer)
    const theirs = await transfer(other)
    await send(mine.tx)
    await send(theirs.tx)
    const bs58 = (await import('bs58')).default
    await socket.until('both in "all"', () => (socket.notifications(all).length >= 2 ? true : undefined))
    const mentioned = socket.notifications(mentions) as {value: {signature: string; err: unknown; logs: string[]}}[]
    assert.deepEqual(
      mentioned.map((n) => n.value.signature),
      [bs58.encode(mine.signature)],
    )
    assert.equal(mentioned[0]!.value.err, null)
    assert.ok(mentioned[0]!.value.logs.some((line) => line.includes('11111111111111111111111111111111 success')))
    const bad = await socket.call('logsSubscribe', [{mentions: ['a', 'b']}])
    assert.equal(bad.error?.code, -32602)
  })

  it('getTransaction answers for a landed transaction: fee, balances, logs, json and base64', async () => {
    const payer = funded()
    const {tx, signature} = await transfer(payer, 2_000_000)
    const bs58 = (await import('bs58')).default
    const id = bs58.encode(signature)
    assert.equal((await send(tx)).result, id)
    const answer = await rpc(t.ln.runtime.rpcUrl, 'getTransaction', [id, {encoding: 'json', commitment: 'confirmed'}])
    const result = answer.result as {
      slot: number
      blockTime: number
      meta: {fee: number; err: unknown; preBalances: number[]; postBalances: number[]; logMessages: string[]}
      transaction: {signatures: string[]; message: {accountKeys: string[]; instructions: {data: string}[]}}
    }
    assert.equal(result.meta.err, null)
    assert.equal(result.meta.fee, 5000)
    assert.equal(result.meta.preBalances[0]! - result.meta.postBalances[0]!, 2_005_000, 'the transfer and the fee')
    assert.equal(result.meta.postBalances[1]! - result.meta.preBalances[1]!, 2_000_000)
    assert.deepEqual(result.transaction.signatures, [id])
    assert.equal(result.transaction.message.accountKeys[0], payer.publicKey.toBase58())
    assert.ok(result.meta.logMessages.length > 0)
    assert.ok(Math.abs(result.blockTime - Date.now() / 1000) < 60)

    const base64 = await rpc(t.ln.runtime.rpcUrl, 'getTransaction', [id, {encoding: 'base64'}])
    assert.deepEqual((base64.result as {transaction: unknown}).transaction, [
      tx.serialize().toString('base64'),
      'base64',
    ])
    const unknown = await rpc(t.ln.runtime.rpcUrl, 'getTransaction', [bs58.encode(new Uint8Array(64).fill(1))])
    assert.equal(unknown.result, null)
    assert.deepEqual((await t.connection.getTransaction(id, {maxSupportedTransactionVersion: 0}))?.meta?.fee, 5000)
  })

  it('getSignatureStatuses answers old transactions only with searchTransactionHistory, as a node does', async () => {
    const payer = funded()
    const {tx, signature} = await transfer(payer)
    const bs58 = (await import('bs58')).default
    const id = bs58.encode(signature)
    await send(tx)
    // 300 slots of 100 ms later, the status cache no longer holds it.
    const later = Date.now() + 301 * 100
    const realNow = Date.now
    Date.now = () => later
    try {
      const recent = await rpc(t.ln.runtime.rpcUrl, 'getSignatureStatuses', [[id]])
      assert.deepEqual((recent.result as {value: unknown[]}).value, [null])
      const searched = await rpc(t.ln.runtime.rpcUrl, 'getSignatureStatuses', [[id], {searchTransactionHistory: true}])
      assert.equal((searched.result as {value: {err: unknown}[]}).value[0]?.err, null)
    } finally {
      Date.now = realNow
    }
  })

  it('keeps slot, root and logs subscriptions within the per-connection limit', async () => {
    for (let i = 0; i < MAX_SUBSCRIPTIONS; i++)
      socket.ws.send(JSON.stringify({jsonrpc: '2.0', id: 1000 + i, method: 'slotSubscribe'}))
    const over = await socket.call('rootSubscribe')
    assert.equal(over.error?.code, -32602)
    assert.match(over.error!.message, /at most 256 subscriptions per connection/)
  })
})
