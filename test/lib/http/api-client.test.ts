/**
 * The API client core against real HTTP servers on 127.0.0.1, through a stand-in service of its own: what every
 * client built on it (deployments, credits, secrets) relies on, apart from any one service's words.
 */
import {strict as assert} from 'node:assert'
import type {IncomingMessage, ServerResponse} from 'node:http'

import {z} from 'zod'

import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {
  ApiClient,
  type ApiClientOptions,
  type ApiService,
  remoteText,
  segment,
} from '../../../src/lib/http/api-client.js'
import {closeHttpAgents, configureHttp} from '../../../src/lib/http/client.js'
import {startServer, type TestServer} from '../../helpers/http.js'

/** A service whose refusals carry the status, the text as the hook saw it, and the URL. */
const SERVICE: ApiService = {
  name: 'the test service',
  short: 'the service',
  code: 'test',
  unreachableHint: 'check --test-url',
  invalidHint: 'is it a test service?',
  refused: ({status, text, url}) =>
    new GpunetError('test_refused', text, {exitCode: ExitCode.UNAVAILABLE, fields: {status, url}}),
}

const ok = z.looseObject({ok: z.literal(true)})

/** Answers the requests in turn with `script` (the last one again once it runs out), recording each one's headers. */
function scripted(script: ((res: ServerResponse) => void)[], seen: IncomingMessage['headers'][] = []) {
  let count = 0
  return (req: IncomingMessage, res: ServerResponse) => {
    seen.push(req.headers)
    script[Math.min(count++, script.length - 1)]!(res)
  }
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) =>
    res.writeHead(status, {'content-type': 'application/json', ...headers}).end(JSON.stringify(body))

/** The GpunetError `promise` rejects with. */
const refusal = (promise: Promise<unknown>): Promise<GpunetError> =>
  promise.then(
    () => assert.fail('expected a refusal'),
    (error: unknown) => {
      assert.ok(error instanceof GpunetError, String(error))
      return error
    },
  )

describe('API client core', () => {
  let server: TestServer | undefined
  const waits: number[] = []
  before(() => configureHttp({retry: {maxRetries: 0}}))
  after(() => configureHttp())
  afterEach(async () => {
    waits.length = 0
    await server?.close()
    server = undefined
    await closeHttpAgents()
  })

  const client = (options: ApiClientOptions = {}) =>
    new ApiClient(`${server!.url}/`, SERVICE, {sleep: async (ms) => void waits.push(ms), ...options})

  it('sends the auth headers and a JSON body; encodes the query and keeps an id inside its segment', async () => {
    let body = ''
    const seen: IncomingMessage['headers'][] = []
    server = await startServer((req, res) => {
      seen.push(req.headers)
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      req.on('end', () => json(200, {ok: true})(res))
    })
    const api = client({auth: async () => ({authorization: 'Bearer t'})})
    assert.equal(api.url, server.url)
    await api.request('POST', `/things/${segment('a/b?c')}`, {n: 1}, ok, {query: {q: 'x y', skip: undefined, n: 2}})
    assert.deepEqual(server.seen, ['POST /things/a%2Fb%3Fc?q=x+y&n=2'])
    assert.equal(seen[0]!.authorization, 'Bearer t')
    assert.equal(seen[0]!['content-type'], 'application/json')
    assert.deepEqual(JSON.parse(body), {n: 1})
  })

  it('waits out a 429 to a POST by its Retry-After, the Idempotency-Key the same on every try', async () => {
    const seen: IncomingMessage['headers'][] = []
    server = await startServer(
      scripted([json(429, {}, {'retry-after': '2'}), json(429, {}), json(200, {ok: true})], seen),
    )
    await client().request('POST', '/pay', {}, ok, {idempotencyKey: 'key-1'})
    assert.deepEqual(waits, [2000, 500])
    assert.deepEqual(
      seen.map((h) => h['idempotency-key']),
      ['key-1', 'key-1', 'key-1'],
    )
  })

  it('gives up on a 429 after its retries, as the service refuses it', async () => {
    server = await startServer(scripted([json(429, {}, {'retry-after': '0'})]))
    const error = await refusal(client({rateLimitRetries: 2}).request('POST', '/pay', {}, ok))
    assert.equal(error.code, 'test_refused')
    assert.equal(error.fields.status, 429)
    assert.equal(server.seen.length, 3)
  })

  it('sends again a request that got no answer only when it carries an Idempotency-Key', async () => {
    let count = 0
    server = await startServer((req, res) => {
      if (count++ === 0) return void req.socket.destroy()
      json(200, {ok: true})(res)
    })
    await client().request('POST', '/pay', {}, ok, {idempotencyKey: 'key-2'})
    assert.equal(server.seen.length, 2)
    count = 0
    const error = await refusal(client().request('POST', '/pay', {}, ok))
    assert.equal(error.code, 'test_unreachable')
    assert.equal(error.exitCode, ExitCode.UNAVAILABLE)
    assert.match(error.message, /^cannot reach the test service at http:\/\/127\.0\.0\.1:\d+ \(/)
    assert.equal(error.hint, 'check --test-url')
    assert.deepEqual(error.fields, {}, 'a service without fields adds none')
  })

  it('renews the credentials once after a 401 and sends again with the new ones', async () => {
    const seen: IncomingMessage['headers'][] = []
    server = await startServer(scripted([json(401, {}), json(200, {ok: true})], seen))
    let token = 'old'
    await client({auth: () => ({authorization: token}), renewAuth: async () => void (token = 'new')}).request(
      'GET',
      '/secret',
      undefined,
      ok,
    )
    assert.deepEqual(
      seen.map((h) => h.authorization),
      ['old', 'new'],
    )
    await server.close()
    server = await startServer(scripted([json(401, {})]))
    let renewals = 0
    const error = await refusal(
      client({renewAuth: async () => void renewals++}).request('GET', '/secret', undefined, ok),
    )
    assert.equal(error.fields.status, 401)
    assert.equal(renewals, 1)
  })

  it('cuts every credential it sends out of what the service answers, fixed or current', async () => {
    server = await startServer(scripted([json(400, {echo: 'key-123456789 token-abcdefgh short'})]))
    const error = await refusal(
      client({secrets: () => ['token-abcdefgh', undefined, 'short']}).request('GET', '/x', undefined, ok),
    )
    assert.equal(error.message, '{"echo":"key-123456789 [redacted] short"}')
    const fixed = await refusal(client({secrets: ['key-123456789']}).request('GET', '/x', undefined, ok))
    assert.equal(fixed.message, '{"echo":"[redacted] token-abcdefgh short"}')
  })

  it('bounds an answer by its own maxBytes, and reads an answer of any status with exchange', async () => {
    server = await startServer(scripted([json(404, {big: 'x'.repeat(2000)})]))
    const answer = await client().exchange('GET', '/health', undefined)
    assert.equal(answer.status, 404)
    assert.equal(answer.ok, false)
    assert.equal(JSON.parse(answer.text).big.length, 2000)
    const error = await refusal(client().exchange('GET', '/health', undefined, {maxBytes: 1024}))
    assert.equal(error.code, 'test_answer_invalid')
    assert.equal(
      error.message,
      `the test service at ${server.url} sent an answer of more than the 1024 bytes gpunet reads`,
    )
    assert.equal(error.hint, 'is it a test service?')
  })

  it('names the route without its query when an answer is no document it can read', async () => {
    server = await startServer(scripted([json(200, {ok: 'yes'})]))
    const error = await refusal(client().request('GET', '/x', undefined, ok, {query: {secret: 'no'}}))
    assert.equal(error.code, 'test_answer_invalid')
    assert.match(error.message, /GET \/x answered a document gpunet cannot read \(ok: /)
  })

  it("makes a service's words harmless for a terminal and short before an error carries them", () => {
    assert.equal(remoteText('\x1b]0;title\x07de\x1b[31mnied\x1b[0m'), 'denied')
    assert.equal(remoteText('x'.repeat(5000)).length, 500)
  })
})
