/**
 * The deployment manager's client against a hostile stand-in manager on 127.0.0.1 (issue 61, "The client trusts a
 * manager too much"): an answer that stalls mid-body, or drips a byte at a time, ends in exit 5 within the client's
 * answer deadline; a 100,000-deep answer is refused (exit 5) before anything walks it; following a manager that
 * floods events at one instant keeps a bounded memory; a withdraw naming the owner as the vault is refused before
 * the wallet signs anything.
 */
import {strict as assert} from 'node:assert'
import type {IncomingMessage, ServerResponse} from 'node:http'

import {DeploymentClient, MAX_ANSWER_BYTES} from '../../../src/lib/deployments/client.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {closeHttpAgents, configureHttp} from '../../../src/lib/http/client.js'
import {startServer, type TestServer} from '../../helpers/http.js'

const DEPLOYMENT = {
  id: 'Dep1oyment1111111111111111111111111111111111',
  name: 'svc',
  vault: 'Vau1t11111111111111111111111111111111111111',
  market: 'Market1111111111111111111111111111111111111',
  owner: 'Owner11111111111111111111111111111111111111',
  status: 'RUNNING',
  replicas: 1,
  timeout: 10,
  strategy: 'SIMPLE',
  created_at: '2026-11-27T10:00:00.000Z',
  updated_at: '2026-11-27T10:00:00.000Z',
}

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
})
