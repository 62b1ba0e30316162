/**
 * The deployment manager's client against real HTTP servers on 127.0.0.1 that answer as a manager would, and as a
 * hostile or broken one would: statuses to exit codes, bounded and checked answers, ids kept inside their path
 * segment; the local checks of `deployment create`; the state checks of stop, delete and withdraw; rendering.
 */
import {strict as assert} from 'node:assert'
import type {IncomingMessage, ServerResponse} from 'node:http'

import {DeploymentClient} from '../../../src/lib/deployments/client/client.js'
import {checkReplicas, timeoutMinutes} from '../../../src/lib/deployments/client/client-create.js'
import {autoscaleLines, deploymentLines, eventLine} from '../../../src/lib/deployments/client/client-render.js'
import {checkState} from '../../../src/lib/deployments/client/client-states.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {MAX_ANSWER_BYTES} from '../../../src/lib/http/api-client.js'
import {closeHttpAgents, configureHttp} from '../../../src/lib/http/client.js'
import {startServer, type TestServer} from '../../helpers/http.js'

const DEPLOYMENT = {
  id: 'Dep1oyment1111111111111111111111111111111111',
  name: 'llm',
  vault: 'Vau1t11111111111111111111111111111111111111',
  market: 'Market1111111111111111111111111111111111111',
  owner: 'Owner11111111111111111111111111111111111111',
  status: 'RUNNING',
  replicas: 2,
  timeout: 120,
  strategy: 'SIMPLE-EXTEND',
  endpoints: [],
  confidential: false,
  active_revision: 1,
  active_jobs: 2,
  time_scale: 1,
  created_at: '2026-11-27T10:00:00.000Z',
  updated_at: '2026-11-27T10:00:00.000Z',
}

/** Sends `status` and `body` (JSON unless a string) to every request. */
function answer(status: number, body: unknown) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, {'content-type': 'application/json'})
    res.end(typeof body === 'string' ? body : JSON.stringify(body))
  }
}

async function refusal(promise: Promise<unknown>): Promise<GpunetError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof GpunetError, String(error))
    return error
  }
  assert.fail('expected a refusal')
}

describe('deployment client', () => {
  let server: TestServer | undefined
  before(() => configureHttp({retry: {maxRetries: 0}}))
  after(() => configureHttp())
  afterEach(async () => {
    await server?.close()
    server = undefined
    await closeHttpAgents()
  })

  const client = (url: string) => new DeploymentClient(url, () => ({'x-user-id': 'me', authorization: 'signed'}))

  it('sends the auth headers and reads the network’s deployment object with all its members', async () => {
    let headers: IncomingMessage['headers'] = {}
    server = await startServer((req, res) => {
      headers = req.headers
      answer(200, {...DEPLOYMENT, extra_member: 'kept'})(req, res)
    })
    const deployment = await client(server.url).get(DEPLOYMENT.id)
    assert.equal(headers['x-user-id'], 'me')
    assert.equal(headers.authorization, 'signed')
    assert.deepEqual(server.seen, [`GET /api/deployments/${DEPLOYMENT.id}`])
    assert.equal(deployment.extra_member, 'kept')
    assert.equal(deployment.active_jobs, 2)
  })

  it('keeps an id inside its path segment: slashes and a query cannot reach another route', async () => {
    server = await startServer(answer(200, DEPLOYMENT))
    await client(server.url).get('../vaults?x=1')
    assert.deepEqual(server.seen, ['GET /api/deployments/..%2Fvaults%3Fx%3D1'])
  })

  const statuses: [number, unknown, number, string][] = [
    [
      400,
      {error: {code: 'invalid_body', message: 'replicas must be at most 100'}},
      ExitCode.INVALID_INPUT,
      'invalid_body',
    ],
    [401, 'Unauthorized', ExitCode.DENIED, 'unauthorized'],
    [
      402,
      {error: {code: 'insufficient_funds', message: 'the vault holds 0 tokens'}},
      ExitCode.INSUFFICIENT_BALANCE,
      'insufficient_funds',
    ],
    [403, {error: 'Forbidden'}, ExitCode.DENIED, 'manager_error'],
    [404, {error: 'Deployment not found.'}, ExitCode.NOT_FOUND, 'not_found'],
    [
      409,
      {error: {code: 'wrong_state', message: 'deployment is STOPPED', hint: 'start it'}},
      ExitCode.USAGE,
      'wrong_state',
    ],
    [500, {error: 'boom'}, ExitCode.UNAVAILABLE, 'manager_error'],
  ]
  for (const [status, body, exitCode, code] of statuses) {
    it(`maps HTTP ${status} to exit ${exitCode} (${code})`, async () => {
      server = await startServer(answer(status, body))
      const error = await refusal(client(server.url).get(DEPLOYMENT.id))
      assert.equal(error.exitCode, exitCode)
      assert.equal(error.code, code)
      assert.equal(error.fields.status, status)
    })
  }

  it("keeps the manager's message and hint, cut short, and refuses a code that is not snake_case", async () => {
    const long = 'x'.repeat(5000)
    server = await startServer(answer(409, {error: {code: 'Bad Code!', message: long, hint: long}}))
    const error = await refusal(client(server.url).stop(DEPLOYMENT.id))
    assert.equal(error.code, 'manager_error')
    assert.equal(error.message.length, 500)
    assert.equal(error.hint?.length, 500)
  })

  it('refuses an answer past the bound, announced or not, as a failing manager (exit 5)', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, {'content-type': 'application/json', 'content-length': String(MAX_ANSWER_BYTES + 1)})
      res.end()
    })
    const announced = await refusal(client(server.url).get(DEPLOYMENT.id))
    assert.equal(announced.exitCode, ExitCode.UNAVAILABLE)
    assert.match(announced.message, /more than the 4194304/)
    await server.close()
    server = await startServer((_req, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      const chunk = Buffer.alloc(1024 * 1024, 0x20)
      for (let i = 0; i < 5; i++) res.write(chunk)
      res.end()
    })
    const streamed = await refusal(client(server.url).get(DEPLOYMENT.id))
    assert.equal(streamed.code, 'manager_answer_invalid')
  })

  it('refuses a document that is not a deployment, or no JSON at all (exit 5)', async () => {
    server = await startServer(answer(200, {...DEPLOYMENT, replicas: 'two'}))
    const wrong = await refusal(client(server.url).get(DEPLOYMENT.id))
    assert.equal(wrong.code, 'manager_answer_invalid')
    assert.match(wrong.message, /replicas/)
    await server.close()
    server = await startServer(answer(200, '<html>proxy</html>'))
    assert.equal((await refusal(client(server.url).get(DEPLOYMENT.id))).exitCode, ExitCode.UNAVAILABLE)
  })

  it('says a manager that is not there is unreachable (exit 5), naming the URL', async () => {
    server = await startServer(answer(200, {}))
    const {url} = server
    await server.close()
    server = undefined
    const error = await refusal(client(url).get(DEPLOYMENT.id))
    assert.equal(error.code, 'manager_unreachable')
    assert.equal(error.exitCode, ExitCode.UNAVAILABLE)
    assert.ok(error.message.includes(url))
  })

  it("reads a page of jobs as the network's API answers it, and a bare list as one last page", async () => {
    const job = {job: 'Job1111111111111111111111111111111111111111', state: 'RUNNING', revision: 1, time_start: 0}
    server = await startServer(answer(200, {jobs: [job], pagination: {cursor_next: 'next', cursor_prev: null}}))
    const paged = await client(server.url).jobs(DEPLOYMENT.id)
    assert.equal(paged.pagination.cursor_next, 'next')
    assert.equal(paged.jobs[0]!.job, job.job)
    await server.close()
    server = await startServer(answer(200, [job, {...job, state: 'COMPLETED'}]))
    const bare = await client(server.url).jobs(DEPLOYMENT.id)
    assert.deepEqual(
      bare.jobs.map((j) => j.state),
      ['RUNNING', 'COMPLETED'],
    )
    assert.equal(bare.pagination.cursor_next, null)
  })

  it('sends the create body as JSON to /api/deployments/create', async () => {
    let body = ''
    server = await startServer((req, res) => {
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      req.on('end', () => answer(200, {...DEPLOYMENT, status: 'DRAFT'})(req, res))
    })
    const created = await client(server.url).create({
      name: 'llm',
      market: DEPLOYMENT.market,
      replicas: 2,
      timeout: 120,
      strategy: 'SIMPLE-EXTEND',
      job_definition: {version: '0.1'},
      time_scale: 30,
    })
    assert.equal(created.status, 'DRAFT')
    assert.deepEqual(server.seen, ['POST /api/deployments/create'])
    assert.deepEqual(JSON.parse(body), {
      name: 'llm',
      market: DEPLOYMENT.market,
      replicas: 2,
      timeout: 120,
      strategy: 'SIMPLE-EXTEND',
      job_definition: {version: '0.1'},
      time_scale: 30,
    })
  })
})

describe('deployment create: local checks', () => {
  it('takes 1 to 100 replicas; 0 and 101 are usage errors', () => {
    assert.equal(checkReplicas(1), 1)
    assert.equal(checkReplicas(100), 100)
    for (const bad of [0, 101, -1, 1.5]) {
      assert.throws(
        () => checkReplicas(bad),
        (e: GpunetError) => e.exitCode === ExitCode.USAGE && e.code === 'invalid_replicas',
      )
    }
  })

  it('reads --timeout in whole minutes: 2h, 90m, 1h30m; refuses seconds, under a minute, and words', () => {
    assert.equal(timeoutMinutes('2h'), 120)
    assert.equal(timeoutMinutes('90m'), 90)
    assert.equal(timeoutMinutes('1h30m'), 90)
    assert.equal(timeoutMinutes('120s'), 2)
    for (const bad of ['90s', '30s', '0m', 'two hours', '', '5']) {
      assert.throws(
        () => timeoutMinutes(bad),
        (e: GpunetError) => e.exitCode === ExitCode.USAGE && e.code === 'invalid_timeout',
      )
    }
  })
})

describe('deployment state checks', () => {
  const at = (status: string) => ({...DEPLOYMENT, status})
  const refuses = (status: string, action: 'stop' | 'delete' | 'move', code: string) =>
    assert.throws(
      () => checkState(at(status), action),
      (e: GpunetError) => e.exitCode === ExitCode.USAGE && e.code === code && e.fields.status === status,
    )

  it('a stop of a deployment that is not running is exit 2', () => {
    for (const status of ['DRAFT', 'STOPPING', 'STOPPED', 'ARCHIVED']) refuses(status, 'stop', 'deployment_not_running')
    for (const status of ['RUNNING', 'STARTING', 'ERROR', 'INSUFFICIENT_FUNDS']) checkState(at(status), 'stop')
  })

  // A withdraw is the manager's to bound (it leaves what the running deployments on the vault need): no state check.
  it('a delete while its jobs may run is exit 2', () => {
    for (const status of ['STARTING', 'RUNNING', 'STOPPING', 'INSUFFICIENT_FUNDS'])
      refuses(status, 'delete', 'deployment_running')
    for (const status of ['DRAFT', 'STOPPED', 'ERROR', 'ARCHIVED']) checkState(at(status), 'delete')
  })

  it('a move is taken RUNNING (and DRAFT or STOPPED, which change market at once); otherwise exit 2', () => {
    for (const status of ['STARTING', 'STOPPING', 'INSUFFICIENT_FUNDS', 'ERROR'])
      refuses(status, 'move', 'deployment_not_running')
    refuses('ARCHIVED', 'move', 'deployment_archived')
    for (const status of ['RUNNING', 'DRAFT', 'STOPPED']) checkState(at(status), 'move')
  })
})

describe('deployment rendering', () => {
  it('shows the state, the strategy, active replicas, the timeout in minutes and a time scale other than 1', () => {
    const lines = deploymentLines({...DEPLOYMENT, time_scale: 30}).join('\n')
    assert.match(lines, /status: +RUNNING/)
    assert.match(lines, /replicas: +2 \(2 active\)/)
    assert.match(lines, /timeout: +120 min/)
    assert.match(lines, /time scale: 30/)
    assert.doesNotMatch(deploymentLines(DEPLOYMENT).join('\n'), /time scale/)
  })

  it("shows gpunet's move under way and queue timeout; a move_from that is no address is not printed", () => {
    const from = '97G9NnvBDQ2WpKu6fasoMsAKmfj63C9rhysJnkeWodAf'
    const lines = deploymentLines({...DEPLOYMENT, move_from: from, queue_timeout: 300}).join('\n')
    assert.match(lines, new RegExp(`moving: +from ${from}`))
    assert.match(lines, /queue: +moves after 300 s QUEUED/)
    assert.doesNotMatch(deploymentLines({...DEPLOYMENT, move_from: '\x1b[31mred'}).join('\n'), /moving/)
  })

  it('shows the token spend against the budget and the SOL fees beside it, reported and not capped', () => {
    const lines = autoscaleLines({
      policy: null,
      signal: null,
      replicas: 1,
      active_jobs: 1,
      spend: {token_base_units: '1200000', fee_lamports: '15000', budget_base_units: '50000000'},
      burn_rate_per_hour: '720000',
      vault: {
        address: 'V',
        token_base_units: '9000000',
        burn_rate_per_hour: '720000',
        deployments: 1,
        lasts_seconds: 45000,
      },
    }).join('\n')
    assert.match(
      lines,
      /spend: +1\.2 tokens of a budget of 50, and 15000 lamports of SOL fees \(reported, not capped\)/,
    )
  })

  it('prints an event with its transaction', () => {
    const line = eventLine({
      category: 'Event',
      type: 'JOB_EXTEND_SUCCESSFUL',
      message: 'extended',
      tx: 'SiG',
      created_at: 'T',
    })
    assert.equal(line, 'T  JOB_EXTEND_SUCCESSFUL  extended (tx SiG)')
  })
})
