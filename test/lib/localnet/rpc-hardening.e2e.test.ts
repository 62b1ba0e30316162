/** The localnet's RPC against hostile or careless clients: dispatch, batch and subscription caps, body limits. */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {connect} from 'node:net'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction} from '@solana/web3.js'
import {base58btc} from 'multiformats/bases/base58'
import WebSocket from 'ws'

import {MAX_BATCH} from '../../../src/lib/localnet/rpc/rpc.js'
import {MAX_SUBSCRIPTIONS} from '../../../src/lib/localnet/rpc/websocket.js'
import {RUN_ACCOUNT_DISCRIMINATOR} from '../../../src/lib/market/index.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {rpc} from '../../helpers/json-rpc.js'
import {listInstruction} from '../../helpers/market.js'

/** A raw HTTP exchange on one socket: what the server wrote, and whether it closed the connection. */
async function rawExchange(port: number, request: Buffer): Promise<{head: string; closed: boolean}> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
  socket.on('error', () => {})
  socket.write(request)
  const closed = await Promise.race([
    once(socket, 'close').then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
  ])
  socket.destroy()
  return {head: received.split('\r\n\r\n')[0] ?? '', closed}
}

/** Sends JSON-RPC requests over a WebSocket and collects what comes back. */
async function openSocket(url: string) {
  const ws = new WebSocket(url)
  await once(ws, 'open')
  const messages: Record<string, unknown>[] = []
  const waiting: (() => void)[] = []
  ws.on('message', (raw) => {
    messages.push(JSON.parse(String(raw)) as Record<string, unknown>)
    waiting.splice(0).forEach((wake) => wake())
  })
  let id = 0
  const next = async (match: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
    for (;;) {
      const at = messages.findIndex(match)
      if (at >= 0) return messages.splice(at, 1)[0]!
      await new Promise<void>((wake) => waiting.push(wake))
    }
  }
  return {
    ws,
    next,
    async call(method: string, params: unknown[]): Promise<Record<string, unknown>> {
      const requestId = ++id
      ws.send(JSON.stringify({jsonrpc: '2.0', id: requestId, method, params}))
      return next((m) => m.id === requestId)
    },
  }
}

describe('localnet RPC hardening', function () {
  this.timeout(60_000)
  const t = useLocalnet()
  const port = () => Number(new URL(t.ln.runtime.rpcUrl).port)

  it('dispatches methods from its own table only: constructor, __proto__ and friends are not methods', async () => {
    for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const answer = await rpc(t.ln.runtime.rpcUrl, method)
      assert.deepEqual(answer.error, {code: -32601, message: 'Method not found'}, method)
    }
  })

  it(`answers a batch of up to ${MAX_BATCH} requests, and refuses a larger or an empty one`, async () => {
    const batch = (n: number) =>
      fetch(t.ln.runtime.rpcUrl, {
        method: 'POST',
        headers: {'content-type': 'application/json'},
        body: JSON.stringify(Array.from({length: n}, (_, id) => ({jsonrpc: '2.0', id, method: 'getSlot'}))),
      }).then((res) => res.json() as Promise<unknown>)
    const full = (await batch(MAX_BATCH)) as {id: number; result: number}[]
    assert.equal(full.length, MAX_BATCH)
    assert.ok(full.every((answer, i) => answer.id === i && typeof answer.result === 'number'))
    const over = (await batch(MAX_BATCH + 1)) as {error: {code: number; message: string}}
    assert.equal(over.error.code, -32600)
    assert.match(over.error.message, new RegExp(`at most ${MAX_BATCH}`))
    assert.equal(((await batch(0)) as {error: {code: number}}).error.code, -32600)
  })

  it('answers 413 to a body over 2 MiB and closes that connection (connection: close)', async () => {
    const body = Buffer.alloc(2 * 1024 * 1024 + 10, 'a')
    const head = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`
    const {head: answer, closed} = await rawExchange(port(), Buffer.concat([Buffer.from(head), body]))
    assert.match(answer, /^HTTP\/1\.1 413 /)
    assert.match(answer, /\r\nconnection: close/i)
    assert.ok(closed, 'the server closed the connection')
    // and the server still answers on a new one
    assert.equal((await rpc(t.ln.runtime.rpcUrl, 'getHealth')).result, 'ok')
  })

  it('answers 400 to malformed percent-encoding in a gateway path', async () => {
    const res = await fetch(`${t.ln.runtime.contentStoreUrl}/ipfs/Qm%E0%A4%A`)
    assert.equal(res.status, 400)
    assert.match(await res.text(), /percent-encoding/)
  })

  it('refuses a transaction whose signers sign, but one of them wrongly (-32003), and moves nothing', async () => {
    const job = Keypair.generate()
    const run = Keypair.generate()
    const tx = new Transaction({feePayer: t.wallet.publicKey, ...t.ln.node.chain.latestBlockhash()}).add(
      listInstruction({
        programId: t.programId,
        market: t.market,
        mint: t.mint,
        payer: t.wallet.publicKey,
        job: job.publicKey,
        run: run.publicKey,
        timeout: 60n,
      }),
    )
    tx.sign(t.wallet, job, run)
    assert.equal(tx.signatures.length, 3)
    const wire = tx.serialize()
    // The run's signature (the third) is flipped; the payer's and the job's are valid.
    const runAt = 1 + 64 * tx.signatures.findIndex((s) => s.publicKey.equals(run.publicKey))
    wire[runAt + 10]! ^= 0x01
    const tokens = getAssociatedTokenAddressSync(t.mint, t.wallet.publicKey, true)
    const before = (await t.connection.getTokenAccountBalance(tokens)).value.amount
    const answer = await rpc(t.ln.runtime.rpcUrl, 'sendTransaction', [wire.toString('base64'), {encoding: 'base64'}])
    assert.equal(answer.error?.code, -32003)
    assert.equal(answer.error?.message, 'Transaction signature verification failure')
    assert.equal((await t.connection.getTokenAccountBalance(tokens)).value.amount, before)
    assert.equal(await t.connection.getAccountInfo(job.publicKey), null)
    // The same transaction correctly signed lands.
    const good = await rpc(t.ln.runtime.rpcUrl, 'sendTransaction', [
      tx.serialize().toString('base64'),
      {encoding: 'base64'},
    ])
    assert.equal(good.error, undefined, JSON.stringify(good.error))
  })

  it('notifies accountSubscribe and programSubscribe (with filters) of account changes', async () => {
    const socket = await openSocket(t.ln.runtime.wsUrl)
    try {
      const watched = Keypair.generate().publicKey
      const account = await socket.call('accountSubscribe', [watched.toBase58(), {encoding: 'base64'}])
      const program = await socket.call('programSubscribe', [
        t.programId.toBase58(),
        {encoding: 'base64', filters: [{memcmp: {offset: 0, bytes: base58btc.baseEncode(RUN_ACCOUNT_DISCRIMINATOR)}}]},
      ])
      const jobs = await socket.call('programSubscribe', [t.programId.toBase58(), {encoding: 'base64'}])
      t.ln.node.fund(watched, {lamports: BigInt(LAMPORTS_PER_SOL)})
      const changed = await socket.next((m) => m.method === 'accountNotification')
      const params = changed.params as {subscription: number; result: {value: {lamports: number}}}
      assert.equal(params.subscription, account.result)
      assert.equal(params.result.value.lamports, LAMPORTS_PER_SOL)

      const job = Keypair.generate()
      const run = Keypair.generate()
      const tx = new Transaction({feePayer: t.wallet.publicKey, ...t.ln.node.chain.latestBlockhash()}).add(
        listInstruction({
          programId: t.programId,
          market: t.market,
          mint: t.mint,
          payer: t.wallet.publicKey,
          job: job.publicKey,
          run: run.publicKey,
          timeout: 60n,
        }),
      )
      tx.sign(t.wallet, job, run)
      assert.equal(t.ln.node.chain.send(tx.serialize()).kind, 'landed')
      // The job and the market (its queue) changed; the subscription hears of both.
      const notified = new Set<string>()
      while (!notified.has(job.publicKey.toBase58()) || !notified.has(t.market.toBase58())) {
        const message = await socket.next(
          (m) =>
            m.method === 'programNotification' && (m.params as {subscription: number}).subscription === jobs.result,
        )
        notified.add((message.params as {result: {value: {pubkey: string}}}).result.value.pubkey)
      }
      // No run was created (no node waits): the filtered subscription heard nothing of the job or market.
      await new Promise((resolve) => setTimeout(resolve, 100))
      const filtered = await Promise.race([
        socket.next(
          (m) =>
            m.method === 'programNotification' && (m.params as {subscription: number}).subscription === program.result,
        ),
        new Promise((resolve) => setTimeout(() => resolve(null), 200)),
      ])
      assert.equal(filtered, null)
      assert.deepEqual((await socket.call('accountUnsubscribe', [account.result])).result, true)
      assert.deepEqual((await socket.call('accountUnsubscribe', [account.result])).result, false)
    } finally {
      socket.ws.close()
    }
  })

  it(`holds at most ${MAX_SUBSCRIPTIONS} subscriptions per connection`, async () => {
    const socket = await openSocket(t.ln.runtime.wsUrl)
    try {
      const key = PublicKey.default.toBase58()
      for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) {
        const answer = await socket.call('accountSubscribe', [key])
        assert.equal(typeof answer.result, 'number')
      }
      const refused = await socket.call('accountSubscribe', [key])
      assert.match((refused.error as {message: string}).message, new RegExp(`at most ${MAX_SUBSCRIPTIONS}`))
      const unknown = await socket.call('constructor', [])
      assert.equal((unknown.error as {code: number}).code, -32601)
      // One freed, one more fits.
      assert.equal((await socket.call('accountUnsubscribe', [0])).result, true)
      assert.equal(typeof (await socket.call('accountSubscribe', [key])).result, 'number')
    } finally {
      socket.ws.close()
    }
  })
})
