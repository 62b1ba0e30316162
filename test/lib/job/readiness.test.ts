import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {WebSocketServer} from 'ws'

import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import {healthChecksByPort, probeServices} from '../../../src/lib/job/readiness.js'

const definition = (expose: unknown): JobDefinition =>
  ({
    version: '0.1',
    type: 'container',
    ops: [{id: 'a', type: 'container/run', args: {image: 'x', expose}}],
  }) as JobDefinition

describe('service readiness, probed through the service URL', () => {
  let server: Server
  let port: number
  let healthy = false
  let hosts: string[] = []

  before(async () => {
    server = createServer((req, res) => {
      hosts.push(req.headers.host ?? '')
      if (req.url === '/health') res.writeHead(healthy ? 200 : 503).end()
      else res.writeHead(healthy ? 200 : 404).end('not yet')
    })
    const wss = new WebSocketServer({server})
    wss.on('connection', (socket) => socket.send(healthy ? 'pong' : 'warming up'))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    port = (server.address() as AddressInfo).port
  })
  after(() => server.close())
  beforeEach(() => {
    healthy = false
    hosts = []
  })

  it('reaches a *.localhost service URL on the loopback address with its own Host header', async () => {
    const url = `http://job1.node.localhost:${port}/`
    const checks = [{type: 'http' as const, method: 'GET' as const, path: '/health', expected_status: 200}]
    const waiting = await probeServices([{op: 'run', port: 80, url}], definition([{port: 80, health_checks: checks}]))
    assert.deepEqual(waiting, {ready: false, detail: `${url}: GET /health answered 503, 200 expected`})
    assert.deepEqual(hosts, [`job1.node.localhost:${port}`])
    healthy = true
    assert.equal(
      (await probeServices([{op: 'run', port: 80, url}], definition([{port: 80, health_checks: checks}]))).ready,
      true,
    )
  })

  it('without health checks, is ready once the URL stops answering 404', async () => {
    const url = `http://job2.node.localhost:${port}/`
    const waiting = await probeServices([{op: 'run', port: 8080, url}], definition(8080))
    assert.deepEqual(waiting, {ready: false, detail: `${url}: GET / answered 404, waiting for the service`})
    healthy = true
    assert.equal((await probeServices([{op: 'run', port: 8080, url}], definition(8080))).ready, true)
  })

  it('checks a websocket health check by its first message', async () => {
    const url = `http://job3.node.localhost:${port}/`
    const def = definition([{port: 9000, health_checks: [{type: 'websocket', expected_response: 'pong'}]}])
    const waiting = await probeServices([{op: 'run', port: 9000, url}], def)
    assert.equal(waiting.ready, false)
    assert.match(waiting.detail, /websocket answered something else/)
    healthy = true
    assert.equal((await probeServices([{op: 'run', port: 9000, url}], def)).ready, true)
  })

  it('says a service that does not answer is not ready, and probes a URL shared by ports once', async () => {
    const closed = createServer()
    closed.listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const deadPort = (closed.address() as AddressInfo).port
    closed.close()
    const url = `http://job4.node.localhost:${deadPort}/`
    const down = await probeServices([{op: 'run', port: 1, url}], definition(1))
    assert.equal(down.ready, false)
    assert.match(down.detail, /GET \/ did not answer \(ECONNREFUSED\)/)

    healthy = true
    const shared = `http://127.0.0.1:${port}/`
    const both = await probeServices(
      [
        {op: 'run', port: 1, url: shared},
        {op: 'run', port: 2, url: shared},
      ],
      definition([{port: 1}, {port: 2}]),
    )
    assert.equal(both.ready, true)
    assert.equal(hosts.length, 1, 'one probe for one URL')
  })

  it('takes the health checks of the first operation exposing a port', () => {
    const def = {
      version: '0.1',
      type: 'container',
      ops: [
        {
          id: 'a',
          type: 'container/run',
          args: {image: 'x', expose: [{port: 80, health_checks: [{type: 'websocket', expected_response: 'a'}]}]},
        },
        {id: 'b', type: 'container/run', args: {image: 'x', expose: [{port: 80}, {port: 81}]}},
      ],
    } as JobDefinition
    const checks = healthChecksByPort(def)
    assert.deepEqual([...checks.keys()], [80, 81])
    assert.equal(checks.get(80)?.length, 1)
    assert.deepEqual(checks.get(81), [])
  })
})
