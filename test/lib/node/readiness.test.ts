import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {WebSocketServer} from 'ws'

import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import {healthChecksByPort, probeServices} from '../../../src/lib/node/readiness.js'
import {Gateway} from '../../../src/lib/gateway/gateway.js'

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
    const waiting = await probeServices(
      [{op: 'run', port: 80, url}],
      definition([{port: 80, health_checks: checks}]),
      false,
    )
    assert.deepEqual(waiting, {ready: false, detail: `${url}: GET /health answered 503, 200 expected`})
    assert.deepEqual(hosts, [`job1.node.localhost:${port}`])
    healthy = true
    assert.equal(
      (await probeServices([{op: 'run', port: 80, url}], definition([{port: 80, health_checks: checks}]), false)).ready,
      true,
    )
  })

  it('without health checks, behind a gateway that marks nothing (the network), is ready once / stops answering 404', async () => {
    const url = `http://job2.node.localhost:${port}/`
    const waiting = await probeServices([{op: 'run', port: 8080, url}], definition(8080), false)
    assert.deepEqual(waiting, {ready: false, detail: `${url}: GET / answered 404, waiting for the service`})
    healthy = true
    assert.equal((await probeServices([{op: 'run', port: 8080, url}], definition(8080), false)).ready, true)
  })

  it('checks a websocket health check by its first message', async () => {
    const url = `http://job3.node.localhost:${port}/`
    const def = definition([{port: 9000, health_checks: [{type: 'websocket', expected_response: 'pong'}]}])
    const waiting = await probeServices([{op: 'run', port: 9000, url}], def, false)
    assert.equal(waiting.ready, false)
    assert.match(waiting.detail, /websocket answered something else/)
    healthy = true
    assert.equal((await probeServices([{op: 'run', port: 9000, url}], def, false)).ready, true)
  })

  it('says a service that does not answer is not ready, and probes a URL shared by ports once', async () => {
    const closed = createServer()
    closed.listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const deadPort = (closed.address() as AddressInfo).port
    closed.close()
    const url = `http://job4.node.localhost:${deadPort}/`
    const down = await probeServices([{op: 'run', port: 1, url}], definition(1), false)
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
      false,
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

  describe("through the localnet's gateway, which marks its own answers", () => {
    let gateway: Gateway
    let service: Server
    let servicePort: number
    let answered = 0
    const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'

    before(async () => {
      // A service with nothing at `/`: its 404 is its own answer, so it is up.
      service = createServer((req, res) => {
        answered++
        res.writeHead(req.url === '/api' ? 200 : 404).end()
      })
      service.listen(0, '127.0.0.1')
      await once(service, 'listening')
      servicePort = (service.address() as AddressInfo).port
      gateway = new Gateway()
      await gateway.listen(0)
    })
    after(async () => {
      await gateway.close()
      service.close()
    })

    it("counts the service's own 404 at / as ready, and the gateway's 404 and 502 as not", async () => {
      const url = gateway.jobUrl(JOB)
      const urls = [{op: 'run', port: 8080, url}]
      gateway.register(JOB, [8080])
      const starting = await probeServices(urls, definition(8080), true)
      assert.deepEqual(starting, {
        ready: false,
        detail: `${url}: GET / answered 404 from the gateway (not-ready), waiting for the service`,
      })
      // Routed to a port where nothing listens yet: the gateway's 502, not the service's.
      const closed = createServer()
      closed.listen(0, '127.0.0.1')
      await once(closed, 'listening')
      const deadPort = (closed.address() as AddressInfo).port
      closed.close()
      gateway.ready(JOB, 8080, deadPort)
      const silent = await probeServices(urls, definition(8080), true)
      assert.deepEqual(silent, {
        ready: false,
        detail: `${url}: GET / answered 502 from the gateway (unreachable), waiting for the service`,
      })
      assert.equal(answered, 0)
      gateway.ready(JOB, 8080, servicePort)
      assert.deepEqual(await probeServices(urls, definition(8080), true), {
        ready: true,
        detail: 'every service answers',
      })
      assert.equal(answered, 1, "the service's own 404 was the answer")
      gateway.remove(JOB)
    })

    it("never passes a health check on the gateway's own answer, whatever status it expects", async () => {
      const url = gateway.jobUrl(JOB)
      gateway.register(JOB, [8080])
      const checks = [{type: 'http' as const, method: 'GET' as const, path: '/', expected_status: 404}]
      const waiting = await probeServices(
        [{op: 'run', port: 8080, url}],
        definition([{port: 8080, health_checks: checks}]),
        true,
      )
      assert.deepEqual(waiting, {
        ready: false,
        detail: `${url}: GET /: the gateway answered 404 (not-ready), 404 expected`,
      })
      gateway.remove(JOB)
    })
  })
})
