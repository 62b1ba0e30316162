import {strict as assert} from 'node:assert'
import {createServer, type IncomingMessage, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {WebSocketServer} from 'ws'

import {checkHttp, checkTcp, checkWebsocket, waitUntilReady} from '../../../src/lib/node/health.js'
import {startServer} from '../../helpers/http.js'

interface Seen {
  method?: string
  url?: string
  headers: IncomingMessage['headers']
  body: string
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

const close = (server: Server) => new Promise((resolve) => server.close(resolve))

describe('health checks', () => {
  let server: Server
  let port: number
  let seen: Seen[]
  let readyAfter = 0

  beforeEach(async () => {
    seen = []
    readyAfter = 0
    server = createServer((req, res) => {
      let body = ''
      req.setEncoding('utf8').on('data', (d: string) => (body += d))
      req.on('end', () => {
        seen.push({method: req.method, url: req.url, headers: req.headers, body})
        res.statusCode = req.url === '/ready' && seen.length <= readyAfter ? 503 : req.url === '/missing' ? 404 : 200
        res.end('body')
      })
    })
    port = await listen(server)
  })

  afterEach(() => close(server))

  describe('checkHttp', () => {
    it('sends method, path, headers and a string body as given', async () => {
      const outcome = await checkHttp(`http://127.0.0.1:${port}`, {
        type: 'http',
        method: 'PUT',
        path: '/api/x?y=1',
        headers: {'X-Token': 't', 'Content-Type': 'text/plain'},
        body: 'raw text',
        expected_status: 200,
      })
      assert.deepEqual(outcome, {ok: true, detail: 'PUT /api/x?y=1 answered 200'})
      assert.equal(seen[0]?.method, 'PUT')
      assert.equal(seen[0]?.url, '/api/x?y=1')
      assert.equal(seen[0]?.headers['x-token'], 't')
      assert.equal(seen[0]?.headers['content-type'], 'text/plain')
      assert.equal(seen[0]?.body, 'raw text')
    })

    it('JSON-encodes a non-string body, on GET too, with its content type', async () => {
      const body = {model: 'm', stream: false}
      const outcome = await checkHttp(`http://127.0.0.1:${port}/`, {
        type: 'http',
        method: 'GET',
        path: '/api/generate',
        body,
        expected_status: 200,
      })
      assert.equal(outcome.ok, true)
      assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), body)
      assert.equal(seen[0]?.headers['content-type'], 'application/json')
    })

    it('fails on another status, and says which', async () => {
      const check = {type: 'http', method: 'GET', path: '/missing', expected_status: 200} as const
      assert.deepEqual(await checkHttp(`http://127.0.0.1:${port}`, check), {
        ok: false,
        detail: 'GET /missing answered 404',
      })
      assert.equal((await checkHttp(`http://127.0.0.1:${port}`, {...check, expected_status: 404})).ok, true)
    })

    it('fails when nothing listens', async () => {
      await close(server)
      const check = {type: 'http', method: 'GET', path: '/', expected_status: 200} as const
      assert.deepEqual(await checkHttp(`http://127.0.0.1:${port}`, check), {ok: false, detail: 'GET /: ECONNREFUSED'})
      server.listen(0, '127.0.0.1')
    })

    it('fails on a server that never answers, at the timeout, after one request', async () => {
      const silent = await startServer(() => {})
      try {
        const check = {type: 'http', method: 'GET', path: '/', expected_status: 200} as const
        const outcome = await checkHttp(silent.url, check, 300)
        assert.deepEqual(outcome, {ok: false, detail: 'GET /: no answer within 300 ms'})
        assert.deepEqual(silent.seen, ['GET /'])
      } finally {
        await silent.close()
      }
    })

    it('probes once: a 503 is an answer, not a reason to send again', async () => {
      const busy = await startServer((_req, res) => res.writeHead(503).end())
      try {
        const check = {type: 'http', method: 'GET', path: '/', expected_status: 200} as const
        assert.deepEqual(await checkHttp(busy.url, check), {ok: false, detail: 'GET / answered 503'})
        assert.deepEqual(busy.seen, ['GET /'])
      } finally {
        await busy.close()
      }
    })
  })

  describe('checkWebsocket', () => {
    let wss: WebSocketServer
    let wsPort: number

    beforeEach(async () => {
      wss = new WebSocketServer({host: '127.0.0.1', port: 0})
      await new Promise((resolve) => wss.once('listening', resolve))
      wsPort = (wss.address() as AddressInfo).port
      wss.on('connection', (socket, req) => (req.url === '/silent' ? undefined : socket.send('hello')))
    })

    afterEach(() => new Promise((resolve) => wss.close(resolve)))

    it('passes when the first message is the expected response', async () => {
      const outcome = await checkWebsocket(`ws://127.0.0.1:${wsPort}/`, {type: 'websocket', expected_response: 'hello'})
      assert.deepEqual(outcome, {ok: true, detail: 'answered the expected response'})
    })

    it('fails on another message, on silence and from a server that does not upgrade', async () => {
      const url = `ws://127.0.0.1:${wsPort}`
      assert.equal((await checkWebsocket(`${url}/`, {type: 'websocket', expected_response: 'bye'})).ok, false)
      assert.deepEqual(await checkWebsocket(`${url}/silent`, {type: 'websocket', expected_response: 'x'}, 300), {
        ok: false,
        detail: 'no message within 300 ms',
      })
      const refused = await checkWebsocket(`ws://127.0.0.1:${port}/`, {type: 'websocket', expected_response: 'x'})
      assert.equal(refused.ok, false)
    })
  })

  it('checkTcp tells an open port from a closed one', async () => {
    assert.equal((await checkTcp('127.0.0.1', port)).ok, true)
    await close(server)
    assert.deepEqual(await checkTcp('127.0.0.1', port), {ok: false, detail: 'ECONNREFUSED'})
    server.listen(0, '127.0.0.1')
  })

  describe('waitUntilReady', () => {
    const ready = {type: 'http', method: 'GET', path: '/ready', expected_status: 200} as const

    it('turns ready once every check passes', async () => {
      readyAfter = 2
      const readiness = await waitUntilReady(
        {host: '127.0.0.1', hostPort: port, health_checks: [ready]},
        {intervalMs: 20, timeoutMs: 5000},
      )
      assert.deepEqual(readiness, {ready: true, attempts: 3, detail: 'GET /ready answered 200'})
    })

    it('gives up after the timeout with the last failure', async () => {
      readyAfter = 1000
      const readiness = await waitUntilReady(
        {host: '127.0.0.1', hostPort: port, health_checks: [ready]},
        {intervalMs: 20, timeoutMs: 200},
      )
      assert.equal(readiness.ready, false)
      assert.equal(readiness.detail, 'timed out: GET /ready answered 503')
      assert.ok(readiness.attempts >= 3, String(readiness.attempts))
    })

    it('stops waiting when aborted', async () => {
      readyAfter = 1000
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 100)
      const started = Date.now()
      const readiness = await waitUntilReady(
        {host: '127.0.0.1', hostPort: port, health_checks: [ready]},
        {intervalMs: 10_000, timeoutMs: 60_000, signal: controller.signal},
      )
      assert.equal(readiness.ready, false)
      assert.match(readiness.detail, /^stopped waiting/)
      assert.ok(Date.now() - started < 5000)
    })

    it('takes a port without checks as ready once it accepts connections', async () => {
      const readiness = await waitUntilReady({host: '127.0.0.1', hostPort: port, health_checks: []}, {intervalMs: 20})
      assert.deepEqual(readiness, {ready: true, attempts: 1, detail: 'accepts connections'})
    })
  })
})
