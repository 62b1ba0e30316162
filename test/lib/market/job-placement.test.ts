/**
 * Where a job runs, read over plain JSON-RPC without web3.js (market/jobs/job-placement.ts), from a JSON-RPC server on
 * 127.0.0.1 that answers as a Solana node does: the fields it reads sit where accounts.ts's codec writes them, and
 * what the node answers is checked as readJob checks it.
 */
import {strict as assert} from 'node:assert'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {Keypair, PublicKey} from '@solana/web3.js'

import {isGpunetError} from '../../../src/lib/errors.js'
import {JOB_FIELD_OFFSETS, RUN_FIELD_OFFSETS} from '../../../src/lib/market/codec/account-layout.js'
import {encodeJobAccount, encodeRunAccount, type JobAccount, JobState} from '../../../src/lib/market/codec/accounts.js'
import {readJobPlacement} from '../../../src/lib/market/jobs/job-placement.js'

const PROGRAM = Keypair.generate().publicKey
const JOB = Keypair.generate().publicKey
const POSTER = Keypair.generate().publicKey

const job = (state: number): JobAccount => ({
  ipfsJob: new Uint8Array(32).fill(9),
  ipfsResult: new Uint8Array(32).fill(8),
  market: Keypair.generate().publicKey,
  node: Keypair.generate().publicKey,
  payer: Keypair.generate().publicKey,
  price: 0xffffffffn,
  project: POSTER,
  state,
  timeEnd: -1n,
  timeStart: 10n,
  timeout: 600n,
})
const run = (forJob: PublicKey, node: PublicKey, time: bigint) =>
  encodeRunAccount({job: forJob, node, payer: Keypair.generate().publicKey, state: 1, time})
const wire = (data: Buffer, owner = PROGRAM) => ({data: [data.toString('base64'), 'base64'], owner: owner.toBase58()})

type Answer = (method: string, params: unknown[]) => unknown

/** A JSON-RPC server whose answers `answer` gives (a `{error}` is sent as the error member); methods it saw. */
async function rpcServer(answer: Answer): Promise<{url: string; methods: string[]; server: Server}> {
  const methods: string[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d: Buffer) => (body += d.toString()))
    req.on('end', () => {
      const {id, method, params} = JSON.parse(body) as {id: number; method: string; params: unknown[]}
      methods.push(method)
      const result = answer(method, params)
      res.setHeader('content-type', 'application/json')
      if (typeof result === 'string') return res.end(result)
      const error = (result as {error?: unknown} | null)?.error
      res.end(JSON.stringify(error ? {jsonrpc: '2.0', id, error} : {jsonrpc: '2.0', id, result}))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, methods, server}
}

describe('readJobPlacement (job exec, shell and stats, without web3.js)', () => {
  let servers: Server[] = []
  afterEach(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
    servers = []
  })
  const read = async (answer: Answer) => {
    const rpc = await rpcServer(answer)
    servers.push(rpc.server)
    const placement = readJobPlacement({rpcUrl: rpc.url, programId: PROGRAM.toBase58()}, JOB.toBase58())
    return {placement, methods: rpc.methods}
  }
  const failure = async (answer: Answer): Promise<{code: string; exitCode: number; message: string}> => {
    const {placement} = await read(answer)
    const error: unknown = await placement.then(
      () => assert.fail('it read a placement'),
      (e: unknown) => e,
    )
    assert.ok(isGpunetError(error), String(error))
    return error
  }

  it('reads the fields where accounts.ts writes them', () => {
    const data = encodeJobAccount(job(JobState.STOPPED))
    assert.deepEqual(data.subarray(JOB_FIELD_OFFSETS.project, JOB_FIELD_OFFSETS.project + 32), POSTER.toBuffer())
    assert.equal(data[JOB_FIELD_OFFSETS.state], JobState.STOPPED)
    const node = Keypair.generate().publicKey
    const runData = run(JOB, node, -2n)
    assert.deepEqual(runData.subarray(RUN_FIELD_OFFSETS.job, RUN_FIELD_OFFSETS.job + 32), JOB.toBuffer())
    assert.deepEqual(runData.subarray(RUN_FIELD_OFFSETS.node, RUN_FIELD_OFFSETS.node + 32), node.toBuffer())
    assert.equal(runData.readBigInt64LE(RUN_FIELD_OFFSETS.time), -2n)
  })

  it('a running job: the node of its oldest run, other accounts the node answered left out', async () => {
    const [older, newer, stranger] = [0, 1, 2].map(() => Keypair.generate().publicKey)
    const {placement, methods} = await read((method, params) => {
      if (method === 'getAccountInfo') {
        assert.equal(params[0], JOB.toBase58())
        return {context: {slot: 1}, value: wire(encodeJobAccount(job(JobState.QUEUED)))}
      }
      assert.equal(method, 'getProgramAccounts')
      return [
        {pubkey: 'a', account: wire(run(JOB, newer!, 20n))},
        {pubkey: 'b', account: wire(run(Keypair.generate().publicKey, stranger!, 1n))},
        {pubkey: 'c', account: wire(run(JOB, stranger!, 2n), Keypair.generate().publicKey)},
        {pubkey: 'd', account: wire(run(JOB, stranger!, 3n).subarray(0, 100))},
        {pubkey: 'e', account: {data: 'not base64 data', owner: PROGRAM.toBase58()}},
        {pubkey: 'f', account: wire(run(JOB, older!, 10n))},
      ]
    })
    assert.deepEqual(await placement, {status: 'RUNNING', node: older!.toBase58(), poster: POSTER.toBase58()})
    assert.deepEqual(methods.sort(), ['getAccountInfo', 'getProgramAccounts'])
  })

  it('an ended job: its status and no node, whatever the search for runs answered', async () => {
    const {placement} = await read((method) =>
      method === 'getAccountInfo' ? {value: wire(encodeJobAccount(job(JobState.DONE)))} : {error: {code: 1}},
    )
    assert.deepEqual(await placement, {status: 'COMPLETED', node: null, poster: POSTER.toBase58()})
  })

  it('a job whose run closed between the reads is read again, and is not called QUEUED', async () => {
    let reads = 0
    const {placement, methods} = await read((method) => {
      if (method === 'getProgramAccounts') return []
      reads++
      return {value: wire(encodeJobAccount(job(reads === 1 ? JobState.QUEUED : JobState.DONE)))}
    })
    assert.equal((await placement).status, 'COMPLETED')
    assert.deepEqual(methods.sort(), ['getAccountInfo', 'getAccountInfo', 'getProgramAccounts'])
  })

  it('no job: exit 7, as readJob says it; another program’s account or another account type: exit 7', async () => {
    // The search for runs fails too: the job's own error is the one told.
    const missing = await failure((method) => (method === 'getAccountInfo' ? {value: null} : {error: {code: 1}}))
    assert.deepEqual([missing.code, missing.exitCode], ['job_not_found', 7])
    assert.equal(missing.message, `no job at ${JOB.toBase58()} on this network`)
    const foreign = await failure(() => ({
      value: wire(encodeJobAccount(job(JobState.QUEUED)), Keypair.generate().publicKey),
    }))
    assert.deepEqual([foreign.code, foreign.exitCode], ['job_not_found', 7])
    assert.match(foreign.message, /belongs to program/)
    const aRun = await failure(() => ({value: wire(run(JOB, POSTER, 1n))}))
    assert.deepEqual([aRun.code, aRun.exitCode], ['job_not_found', 7])
  })

  it('an RPC node that fails, errs or answers no account: exit 5 naming it', async () => {
    const cut = await failure(() => ({value: wire(encodeJobAccount(job(JobState.QUEUED)).subarray(0, 100))}))
    assert.deepEqual([cut.code, cut.exitCode], ['account_unreadable', 5])
    const erred = await failure(() => ({error: {code: -32602, message: 'Invalid param'}}))
    assert.deepEqual([erred.code, erred.exitCode], ['rpc_failed', 5])
    assert.match(erred.message, /the Solana RPC node http:\/\/127\.0\.0\.1:\d+ failed: getAccountInfo: Invalid param/)
    const garbled = await failure(() => 'not json')
    assert.deepEqual([garbled.code, garbled.exitCode], ['rpc_failed', 5])
    const shapeless = await failure(() => ({value: {data: 7}}))
    assert.deepEqual([shapeless.code, shapeless.exitCode], ['rpc_failed', 5])
  })
})
