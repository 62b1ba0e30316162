/**
 * The deployment manager's client against a hostile stand-in manager on 127.0.0.1 (issue 61, "The client trusts a
 * manager too much"): an answer that stalls mid-body, or drips a byte at a time, ends in exit 5 within the client's
 * answer deadline; a 100,000-deep answer is refused (exit 5) before anything walks it; following a manager that
 * floods events at one instant keeps a bounded memory; a withdraw naming the owner as the vault is refused before
 * the wallet signs anything.
 */
import {strict as assert} from 'node:assert'
import type {IncomingMessage, ServerResponse} from 'node:http'
import {setFlagsFromString} from 'node:v8'
import {runInNewContext} from 'node:vm'

import {SystemProgram, Keypair, Transaction} from '@solana/web3.js'

import {DeploymentClient} from '../../../src/lib/deployments/client/client.js'
import {checkWithdraw} from '../../../src/lib/deployments/client/client-vault.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {MAX_ANSWER_BYTES} from '../../../src/lib/http/api-client.js'
import {closeHttpAgents, configureHttp} from '../../../src/lib/http/client.js'
import {deploymentEvents} from '../../../src/lib/job/deployment-events.js'
import {DEPLOYMENT_JSON as DEPLOYMENT} from '../../helpers/deployment-json.js'
import {startServer, type TestServer} from '../../helpers/http.js'

async function refusal(promise: Promise<unknown>): Promise<GpunetError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof GpunetError, `not a GpunetError: ${String(error)}`)
    return error
  }
  assert.fail('expected a refusal')
}

/** The headers of a JSON answer and the start of a page, then nothing more (or a space every 100 ms). */
function stall(drip: boolean) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, {'content-type': 'application/json'})
    res.write('{"deployments": [')
    if (!drip) return
    const timer = setInterval(() => res.write(' '), 100)
    res.on('close', () => clearInterval(timer))
  }
}

describe('deployment client: a hostile manager', () => {
  let server: TestServer | undefined
  before(() => configureHttp({retry: {maxRetries: 0}}))
  after(() => configureHttp())
  afterEach(async () => {
    await server?.close()
    server = undefined
    await closeHttpAgents()
  })

  for (const drip of [false, true]) {
    it(`ends an answer that ${drip ? 'drips a byte every 100 ms' : 'stalls mid-body'} at the answer deadline: exit 5`, async function () {
      this.timeout(10_000)
      server = await startServer(stall(drip))
      const client = new DeploymentClient(server.url, () => ({}), {answerTimeoutMs: 800})
      const began = Date.now()
      const error = await refusal(client.list())
      const took = Date.now() - began
      assert.equal(error.code, 'manager_timeout')
      assert.equal(error.exitCode, ExitCode.UNAVAILABLE)
      assert.match(error.message, /no whole answer within 800 ms/)
      assert.ok(took >= 700 && took < 5000, `took ${took} ms`)
    })
  }

  it('ends an answer whose headers never come at the same deadline', async function () {
    this.timeout(10_000)
    server = await startServer(() => {})
    const client = new DeploymentClient(server.url, () => ({}), {answerTimeoutMs: 500})
    const error = await refusal(client.get(DEPLOYMENT.id))
    assert.equal(error.code, 'manager_timeout')
    assert.equal(error.exitCode, ExitCode.UNAVAILABLE)
  })

  it('refuses a 100,000-deep answer (exit 5, manager_answer_invalid) instead of handing it on', async () => {
    const depth = 100_000
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`
    assert.ok(deep.length < MAX_ANSWER_BYTES)
    server = await startServer((_req, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(`${JSON.stringify(DEPLOYMENT).slice(0, -1)},"extra":${deep}}`)
    })
    const error = await refusal(new DeploymentClient(server.url, () => ({})).get(DEPLOYMENT.id))
    assert.equal(error.code, 'manager_answer_invalid')
    assert.equal(error.exitCode, ExitCode.UNAVAILABLE)
    assert.match(error.message, /nests arrays and objects more than \d+ deep/)
  })

  it('keeps an answer nested as deep as a definition may be inside a page of jobs', async () => {
    // A job definition nests up to 64 deep (nesting.ts); a page of jobs holds it three levels down.
    let definition: unknown = 'leaf'
    for (let i = 0; i < 63; i++) definition = {a: definition}
    const job = {job: 'Job1111111111111111111111111111111111111111', state: 'RUNNING', jobDefinition: definition}
    server = await startServer((_req, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify({jobs: [job], pagination: {cursor_next: null}}))
    })
    const page = await new DeploymentClient(server.url, () => ({})).jobs(DEPLOYMENT.id)
    assert.equal(page.jobs.length, 1)
  })

  it('follows a manager that floods events at one instant in bounded memory', async function () {
    this.timeout(120_000)
    // 400 pages of 100 events of 9,000 characters, all of one instant and each new: 360 MB if all were kept.
    const pages = 400
    const filler = 'x'.repeat(9000)
    let served = 0
    server = await startServer((req, res) => {
      const url = new URL(req.url!, 'http://x')
      res.writeHead(200, {'content-type': 'application/json'})
      if (!url.pathname.endsWith('/events')) return res.end(JSON.stringify({...DEPLOYMENT, status: 'STOPPED'}))
      const page = served++
      const events = Array.from({length: 100}, (_, i) => ({
        category: 'Deployment',
        type: 'FLOOD',
        message: `${page}-${i}-${filler}`,
        created_at: '2026-11-27T10:00:00.000Z',
      }))
      res.end(JSON.stringify({events, pagination: {cursor_next: page + 1 < pages ? `p${page + 1}` : null}}))
    })
    // What stays reachable, not the pages' garbage: measured after a full collection.
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    gc()
    const base = process.memoryUsage().heapUsed
    let peak = 0
    let printed = 0
    await deploymentEvents(new DeploymentClient(server.url, () => ({})), DEPLOYMENT.id, {
      follow: true,
      pollMs: 10,
      event: () => {
        printed++
        if (printed % 5000 !== 0) return
        gc()
        peak = Math.max(peak, process.memoryUsage().heapUsed - base)
      },
    })
    assert.equal(printed, pages * 100)
    assert.ok(peak < 50 * 1024 * 1024, `what stays on the heap grew by ${Math.round(peak / 1024 / 1024)} MB`)
  })
})

describe('deployment withdraw: a manager naming the owner as the vault', () => {
  const owner = Keypair.generate()
  const mint = Keypair.generate().publicKey

  it('refuses the transaction before the wallet signs it (exit 5, withdraw_refused), naming why', () => {
    // What such a manager answers: 5 SOL "from the vault" to the owner, the owner paying the fee, so the wallet's
    // own signature is the only one it needs; signed here as the CLI would sign it.
    const tx = new Transaction({feePayer: owner.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58()})
    tx.add(SystemProgram.transfer({fromPubkey: owner.publicKey, toPubkey: owner.publicKey, lamports: 5_000_000_000}))
    tx.sign(owner)
    assert.ok(tx.verifySignatures(), 'a real signature')
    const base64 = tx.serialize().toString('base64')
    let error: unknown
    try {
      checkWithdraw(base64, owner.publicKey, owner.publicKey, mint, 1_000_000n)
    } catch (caught) {
      error = caught
    }
    assert.ok(
      error instanceof GpunetError,
      'the transaction was taken: the CLI would sign it and print "Withdrew 5 SOL"',
    )
    assert.equal(error.code, 'withdraw_refused')
    assert.equal(error.exitCode, ExitCode.UNAVAILABLE)
    assert.match(error.message, /names your own wallet \S+ as the vault/)
  })
})
