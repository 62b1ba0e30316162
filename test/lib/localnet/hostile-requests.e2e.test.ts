/**
 * One request each that used to crash or freeze the localnet (issue 22), sent to a localnet in a child
 * process: a crash there fails the test instead of the suite, and the child must still answer afterwards.
 */
import {strict as assert} from 'node:assert'
import type {ChildProcessWithoutNullStreams} from 'node:child_process'
import {once} from 'node:events'

import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'
import WebSocket from 'ws'

import {CommitEvents} from '../../../src/lib/localnet/chain/commit-events.js'
import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {checkTransactionLayout, PACKET_DATA_SIZE, WireError} from '../../../src/lib/localnet/chain/wire.js'
import {readKeypair} from '../../../src/lib/keys/wallet.js'
import {type CliSandbox, cliSandbox, spawnForegroundLocalnet} from '../../helpers/cli-localnet.js'

/** A raw JSON-RPC call over HTTP; throws when the localnet does not answer (it crashed). */
async function call(url: string, body: string): Promise<Record<string, unknown>> {
  const res = await fetch(url, {method: 'POST', headers: {'content-type': 'application/json'}, body})
  return (await res.json()) as Record<string, unknown>
}

/** The first message a WebSocket answers to `message`. */
async function wsAnswer(url: string, message: string): Promise<Record<string, unknown>> {
  const ws = new WebSocket(url)
  await once(ws, 'open')
  try {
    ws.send(message)
    const [raw] = (await once(ws, 'message')) as [Buffer]
    return JSON.parse(String(raw)) as Record<string, unknown>
  } finally {
    ws.close()
  }
}

/** A transfer as wire bytes: legacy or v0, signed by `payer`. */
function transferBytes(payer: Keypair, blockhash: string, version: 'legacy' | 0): Uint8Array {
  const instruction = SystemProgram.transfer({fromPubkey: payer.publicKey, toPubkey: payer.publicKey, lamports: 1})
  if (version === 'legacy') {
    const tx = new Transaction({feePayer: payer.publicKey, recentBlockhash: blockhash}).add(instruction)
    tx.sign(payer)
    return tx.serialize()
  }
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions: [instruction],
  }).compileToV0Message()
  const tx = new VersionedTransaction(message)
  tx.sign([payer])
  return tx.serialize()
}

/** A one-signature transaction with its account-key count written in two bytes (`0x82 0x00` for 2). */
function aliasAccountKeyCount(raw: Uint8Array): Uint8Array {
  // 1 count byte, 64 signature bytes, a version byte for v0, 3 header bytes: then the count.
  const at = 1 + 64 + ((raw[65] as number) & 0x80 ? 1 : 0) + 3
  assert.equal(raw[at], 2)
  return Uint8Array.from([...raw.subarray(0, at), 0x82, 0x00, ...raw.subarray(at + 1)])
}

describe('wire transaction layout', () => {
  const payer = Keypair.generate()
  const blockhash = Keypair.generate().publicKey.toBase58()

  it('accepts what web3.js writes, legacy and v0', () => {
    checkTransactionLayout(transferBytes(payer, blockhash, 'legacy'))
    checkTransactionLayout(transferBytes(payer, blockhash, 0))
  })

  it('refuses a compact-u16 with a needless continuation byte, which web3.js accepts and litesvm panics on', () => {
    const raw = transferBytes(payer, blockhash, 'legacy')
    const aliased = aliasAccountKeyCount(raw)
    // web3.js takes it, as the same transaction
    assert.deepEqual(VersionedTransaction.deserialize(aliased).message.staticAccountKeys.length, 2)
    assert.throws(() => checkTransactionLayout(aliased), {
      name: 'WireError',
      message: 'non-canonical compact-u16 for the length of its account keys',
    })
    const signatures = Uint8Array.from([0x81, 0x00, ...raw.subarray(1)])
    assert.throws(
      () => checkTransactionLayout(signatures),
      /non-canonical compact-u16 for the length of its signatures/,
    )
  })

  it('refuses counts past the bytes, overlong compact-u16s and transactions past the packet size', () => {
    assert.throws(() => checkTransactionLayout(Uint8Array.from([0x05, 1, 2, 3])), WireError)
    assert.throws(() => checkTransactionLayout(Uint8Array.from([0x80, 0x80, 0x80, 0x01])), WireError)
    assert.throws(() => checkTransactionLayout(Uint8Array.from([0xff, 0xff, 0x04])), /overflow/)
    assert.throws(() => checkTransactionLayout(new Uint8Array(PACKET_DATA_SIZE + 1)), /too large/)
  })
})

describe('commit events', () => {
  it('calls every listener and never throws when one fails', () => {
    const events = new CommitEvents()
    const heard: string[] = []
    events.on('accounts', () => {
      throw new Error('a subscriber failed')
    })
    events.on('accounts', (key: string) => heard.push(key))
    events.once('accounts', (key: string) => heard.push(`once ${key}`))
    assert.equal(events.emit('accounts', 'a'), true)
    events.emit('accounts', 'b')
    assert.deepEqual(heard, ['a', 'once a', 'b'])
  })
})

describe('hostile requests to a running localnet', function () {
  this.timeout(120_000)
  let box: CliSandbox
  let child: ChildProcessWithoutNullStreams
  let status: LocalnetStatus
  let exited = false

  before(async () => {
    box = cliSandbox()
    ;({child, status} = await spawnForegroundLocalnet(box.dataDir, box.env))
    child.on('exit', () => (exited = true))
  })
  after(async () => {
    child?.kill('SIGTERM')
    if (child && !exited) await once(child, 'exit')
    await box?.cleanup()
  })

  /** The localnet still runs and answers getHealth. */
  async function assertAlive(): Promise<void> {
    assert.equal(exited, false, 'the localnet process exited')
    const health = await call(status.rpcUrl!, JSON.stringify({jsonrpc: '2.0', id: 1, method: 'getHealth'}))
    assert.equal(health.result, 'ok')
  }

  it('answers a transaction with a non-canonical compact-u16 with -32602, and lives on (finding 1)', async () => {
    const connection = new Connection(status.rpcUrl!, 'confirmed')
    const {blockhash} = await connection.getLatestBlockhash()
    for (const version of ['legacy', 0] as const) {
      const raw = transferBytes(Keypair.generate(), blockhash, version)
      const aliased = Buffer.from(aliasAccountKeyCount(raw)).toString('base64')
      for (const method of ['simulateTransaction', 'sendTransaction']) {
        const body = {jsonrpc: '2.0', id: 1, method, params: [aliased, {encoding: 'base64', sigVerify: false}]}
        const answer = (await call(status.rpcUrl!, JSON.stringify(body))) as {error?: {code: number; message: string}}
        assert.equal(answer.error?.code, -32602)
        assert.match(answer.error.message, /non-canonical compact-u16/)
      }
    }
    await assertAlive()
  })

  it('refuses an id nested 5,000 deep over WebSocket and HTTP, and lives on (finding 2)', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`
    const message = `{"jsonrpc":"2.0","id":${deep},"method":"slotSubscribe"}`
    // Refused as a node's JSON parser refuses what passes its recursion limit (the one limit, nesting.ts).
    const expected = {jsonrpc: '2.0', error: {code: -32700, message: 'Parse error: nested more than 64 deep'}, id: null}
    assert.deepEqual(await wsAnswer(status.wsUrl!, message), expected)
    assert.deepEqual(await call(status.rpcUrl!, message.replace('slotSubscribe', 'getHealth')), expected)
    // Within the limit, an id that is no string, number or null is an invalid request.
    const shallow = '{"jsonrpc":"2.0","id":[[1]],"method":"getHealth"}'
    const invalid = {jsonrpc: '2.0', error: {code: -32600, message: 'Invalid request'}, id: null}
    assert.deepEqual(await wsAnswer(status.wsUrl!, shallow), invalid)
    assert.deepEqual(await call(status.rpcUrl!, shallow), invalid)
    await assertAlive()
  })

  it('refuses an unknown subscription encoding when subscribing, and later commits answer (finding 4)', async () => {
    const wallet = readKeypair(box.env.GPUNET_WALLET!)
    const ws = new WebSocket(status.wsUrl!)
    await once(ws, 'open')
    try {
      const subscribe = {
        jsonrpc: '2.0',
        id: 7,
        method: 'accountSubscribe',
        params: [wallet.publicKey.toBase58(), {encoding: 'bogus'}],
      }
      ws.send(JSON.stringify(subscribe))
      const [raw] = (await once(ws, 'message')) as [Buffer]
      const answer = JSON.parse(String(raw)) as {id: number; error?: {code: number; message: string}}
      assert.equal(answer.id, 7)
      assert.equal(answer.error?.code, -32602)
      assert.match(answer.error.message, /unknown variant `bogus`/)
      const connection = new Connection(status.rpcUrl!, 'confirmed')
      const {blockhash} = await connection.getLatestBlockhash()
      const tx = new Transaction({feePayer: wallet.publicKey, recentBlockhash: blockhash}).add(
        SystemProgram.transfer({
          fromPubkey: wallet.publicKey,
          toPubkey: Keypair.generate().publicKey,
          lamports: LAMPORTS_PER_SOL,
        }),
      )
      tx.sign(wallet)
      const sent = await connection.sendRawTransaction(tx.serialize())
      assert.equal((await connection.getSignatureStatus(sent)).value?.err, null)
    } finally {
      ws.close()
    }
  })

  it('refuses 100 KB of base58 before decoding it: a transaction and a memcmp filter (finding 5)', async () => {
    const text = '2'.repeat(100_000)
    const send = {jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [text]}
    const sent = (await call(status.rpcUrl!, JSON.stringify(send))) as {error?: {code: number; message: string}}
    assert.equal(sent.error?.code, -32602)
    assert.equal(sent.error.message, 'base58 encoded transaction too large: 100000 bytes (max: encoded/raw 1683/1232)')
    const filter = {memcmp: {offset: 0, bytes: text}}
    const program = SystemProgram.programId.toBase58()
    const search = {jsonrpc: '2.0', id: 1, method: 'getProgramAccounts', params: [program, {filters: [filter]}]}
    const found = (await call(status.rpcUrl!, JSON.stringify(search))) as {error?: {code: number; message: string}}
    assert.equal(found.error?.code, -32602)
    assert.match(found.error.message, /encoded binary data should be less than 129 bytes/)
    await assertAlive()
  })
})
