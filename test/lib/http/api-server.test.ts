import {strict as assert} from 'node:assert'

import {ApiError, badRequest, retryLater, toApiError} from '../../../src/lib/http/api-error.js'
import {type ApiServer, type ApiServerOptions, createApiServer} from '../../../src/lib/http/api-server.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'

describe('the one server base (api-server.ts)', () => {
  let server: ApiServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  /** A server with the routes every test asks, listening on 127.0.0.1. */
  const start = async (options: Partial<ApiServerOptions> = {}) => {
    server = createApiServer({bodyLimit: 64, ...options})
    server.app.post('/echo', async (request) => ({body: request.body ?? null}))
    server.app.register(
      async (app) => {
        app.get('/hinted', async () => {
          throw new ApiError(409, 'wrong_state', 'not now', 'try later', {'retry-after': '3'})
        })
        app.get('/gpunet', async () => {
          throw new GpunetError('gone', 'no such thing', {exitCode: ExitCode.NOT_FOUND, hint: 'look elsewhere'})
        })
        app.get('/broken', async () => {
          throw new Error('internals')
        })
      },
      {prefix: '/in'},
    )
    return server.listen(0, '127.0.0.1')
  }
  const post = (url: string, body: string, type = 'application/json') =>
    fetch(`${url}/echo`, {method: 'POST', headers: {'content-type': type}, body})

  it('answers a route error with its status, body, hint and headers, under a plugin prefix too', async () => {
    const url = await start()
    const answer = await fetch(`${url}/in/hinted`)
    assert.equal(answer.status, 409)
    assert.equal(answer.headers.get('retry-after'), '3')
    assert.deepEqual(await answer.json(), {error: {code: 'wrong_state', message: 'not now', hint: 'try later'}})
  })

  it('maps a GpunetError by its exit code, and tells the 5xx hook of an unexpected error without showing it', async () => {
    const told: string[] = []
    const url = await start({onServerError: (error, answer) => told.push(`${(error as Error).message} ${answer.code}`)})
    const missing = await fetch(`${url}/in/gpunet`)
    assert.equal(missing.status, 404)
    assert.deepEqual(await missing.json(), {error: {code: 'gone', message: 'no such thing', hint: 'look elsewhere'}})
    const broken = await fetch(`${url}/in/broken`)
    assert.equal(broken.status, 500)
    assert.deepEqual(await broken.json(), {error: {code: 'internal', message: 'internal error'}})
    assert.deepEqual(told, ['internals internal'])
  })

  it("tries the service's own errors first", async () => {
    const url = await start({
      errors: (error) => ((error as Error).message === 'internals' ? badRequest('mine', 'm') : undefined),
    })
    const answer = await fetch(`${url}/in/broken`)
    assert.equal(answer.status, 400)
    assert.deepEqual(await answer.json(), {error: {code: 'mine', message: 'm'}})
  })

  it('takes JSON only by default: an empty body is none, a broken one 400, another type 415', async () => {
    const url = await start()
    assert.deepEqual(await (await post(url, '{"a":1}')).json(), {body: {a: 1}})
    assert.deepEqual(await (await post(url, '')).json(), {body: null})
    const broken = await post(url, '{')
    assert.equal(broken.status, 400)
    assert.deepEqual(await broken.json(), {error: {code: 'malformed_body', message: 'the body is not valid JSON'}})
    const form = await post(url, 'a=1', 'application/x-www-form-urlencoded')
    assert.equal(form.status, 415)
    assert.deepEqual(await form.json(), {error: {code: 'unsupported_media_type', message: 'send application/json'}})
  })

  it('takes the extra content types a service names, and names them in a 415', async () => {
    const url = await start({parsers: {'text/plain': (body) => ({text: body.toString('utf8')})}})
    assert.deepEqual(await (await post(url, 'hi', 'text/plain')).json(), {body: {text: 'hi'}})
    const other = await post(url, 'x', 'application/xml')
    assert.equal(other.status, 415)
    assert.equal(
      ((await other.json()) as {error: {message: string}}).error.message,
      'send application/json or text/plain',
    )
  })

  it('answers a body past the limit 413, a broken URL 400 and an unknown route 404, in the same shape', async () => {
    const url = await start()
    const large = await post(url, JSON.stringify({a: 'x'.repeat(100)}))
    assert.equal(large.status, 413)
    assert.deepEqual(await large.json(), {error: {code: 'body_too_large', message: 'the body is too large'}})
    const broken = await fetch(`${url}/%zz`)
    assert.equal(broken.status, 400)
    assert.deepEqual(await broken.json(), {error: {code: 'invalid_url', message: 'not a valid URL: /%zz'}})
    const unknown = await fetch(`${url}/in/nothing?x=1`)
    assert.equal(unknown.status, 404)
    assert.deepEqual(await unknown.json(), {error: {code: 'no_route', message: 'no route GET /in/nothing'}})
  })

  it('refuses web pages on loopback unless their origin is allowed', async () => {
    const url = await start({allowedOrigins: ['http://allowed.example']})
    const page = await fetch(`${url}/in/nothing`, {headers: {origin: 'http://page.example'}})
    assert.equal(page.status, 403)
    assert.equal(((await page.json()) as {error: {code: string}}).error.code, 'refused')
    const allowed = await fetch(`${url}/in/nothing`, {headers: {origin: 'http://allowed.example'}})
    assert.equal(allowed.status, 404)
  })
})

describe('toApiError', () => {
  it('keeps an ApiError, and gives retryLater its Retry-After', () => {
    const error = retryLater(503, 'busy', 'try again', 5)
    assert.equal(toApiError(error), error)
    assert.deepEqual(error.headers, {'retry-after': '5'})
  })

  it('answers a GpunetError whose exit code has no status as an internal error', () => {
    const answer = toApiError(new GpunetError('odd', 'secret detail'))
    assert.deepEqual([answer.status, answer.code, answer.message], [500, 'internal', 'internal error'])
  })
})
