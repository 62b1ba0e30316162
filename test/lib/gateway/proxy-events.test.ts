/**
 * The deployment proxies' lifecycle as the gateway publishes it (network-names.ts, proxy-events.ts), what the
 * localnet's deployment manager reads its tunnel watch from: a real gateway and real HTTP services on 127.0.0.1,
 * the groups' checks at a short interval.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {Gateway} from '../../../src/lib/gateway/gateway.js'
import {type ProxyEvent, ProxyEvents} from '../../../src/lib/gateway/proxy-events.js'
import type {HealthCheck} from '../../../src/lib/definition/schema.js'
import {networkNames} from '../../../src/lib/node/network-names.js'

const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'
const HASH = 'x'.repeat(45)
const GET_200: HealthCheck = {type: 'http', method: 'GET', path: '/health', expected_status: 200} as HealthCheck

describe('gateway: the deployment proxies’ registered / unregistered events', () => {
  let gateway: Gateway
  let server: Server
  let port: number
  let healthy: boolean
  let events: ProxyEvent[]
  let unsubscribe: () => void

  before(async () => {
    server = createServer((req, res) => {
      res.writeHead(req.url === '/health' && !healthy ? 503 : 200)
      res.end('ok')
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    port = (server.address() as AddressInfo).port
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  beforeEach(() => {
    healthy = true
    gateway = new Gateway({networkNames: {checkIntervalMs: 20, maxFailed: 2}})
    events = []
    unsubscribe = gateway.proxyEvents.subscribe((e) => events.push(e))
  })
  afterEach(async () => {
    unsubscribe()
    await gateway.close()
  })

  /** The job's operation `web` with port 8080 (its checks as given), announced and named; `ready` serves it. */
  function announce(checks: HealthCheck[] = []) {
    gateway.register(JOB, [8080])
    const ports = [{port: 8080, health_checks: checks}]
    gateway.serveNames(
      JOB,
      networkNames({job: JOB, opIndex: 0, opId: 'web', deploymentHash: HASH, deploymentId: 'dep-1', ports}),
    )
  }
  const seen = () => events.map((e) => [e.type, e.reason ?? null])
  const until = async (what: () => boolean) => {
    for (let i = 0; i < 200 && !what(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.ok(what(), `waited for ${JSON.stringify(seen())}`)
  }

  it('registers once its port is ready, with frpc’s metadata; a port never ready never registers', () => {
    announce()
    assert.equal(events.length, 0, 'announced, not served yet (a service that never came up)')
    gateway.ready(JOB, 8080, port)
    assert.equal(events.length, 1)
    const event = events[0]!
    assert.deepEqual(
      {...event, timestamp: 0},
      {type: 'registered', job: JOB, opId: 'web', port: 8080, deploymentId: 'dep-1', timestamp: 0},
    )
  })

  it('its operation ended (withdraw, the job’s end): graceful; its node gone with the job running: lost', () => {
    announce()
    gateway.ready(JOB, 8080, port)
    gateway.withdraw(JOB, [8080])
    assert.deepEqual(seen(), [
      ['registered', null],
      ['unregistered', 'graceful'],
    ])
    announce()
    gateway.ready(JOB, 8080, port)
    gateway.remove(JOB, 'lost')
    assert.deepEqual(seen().slice(2), [
      ['registered', null],
      ['unregistered', 'lost'],
    ])
    gateway.remove(JOB)
    assert.equal(events.length, 4, 'nothing more to unregister')
  })

  it('a member leaving its group after its failed GET checks: lost; back on a pass: registered', async () => {
    announce([GET_200])
    gateway.ready(JOB, 8080, port)
    healthy = false
    await until(() => events.length === 2)
    assert.deepEqual(seen(), [
      ['registered', null],
      ['unregistered', 'lost'],
    ])
    healthy = true
    await until(() => events.length === 3)
    assert.deepEqual(seen()[2], ['registered', null])
  })

  it('a port whose checks are not GET expecting 200 is not checked: its failing service stays registered', async () => {
    announce([{type: 'http', method: 'GET', path: '/health', expected_status: 204} as HealthCheck])
    gateway.ready(JOB, 8080, port)
    healthy = false
    await new Promise((resolve) => setTimeout(resolve, 150))
    assert.deepEqual(seen(), [['registered', null]])
  })

  it('a job listed without deployment_id has no deployment proxy: nothing is published', () => {
    gateway.register(JOB, [8080])
    gateway.serveNames(JOB, networkNames({job: JOB, opIndex: 0, opId: 'web', ports: [{port: 8080}]}))
    gateway.ready(JOB, 8080, port)
    gateway.remove(JOB, 'lost')
    assert.deepEqual(events, [])
  })

  it('a new subscriber gets the last event of each proxy first (the snapshot), then the live ones', () => {
    announce()
    gateway.ready(JOB, 8080, port)
    gateway.withdraw(JOB, [8080])
    const late: ProxyEvent[] = []
    const stop = gateway.proxyEvents.subscribe((e) => late.push(e))
    assert.deepEqual(
      late.map((e) => [e.type, e.reason]),
      [['unregistered', 'graceful']],
    )
    announce()
    gateway.ready(JOB, 8080, port)
    assert.equal(late.length, 2)
    stop()
  })

  it('keeps at most its bound of proxies for the snapshot, the oldest dropped first', () => {
    const kept = new ProxyEvents(2)
    for (const p of [1, 2, 3]) kept.publish({type: 'registered', job: JOB, opId: 'web', port: p, timestamp: p})
    assert.deepEqual(
      kept.snapshot().map((e) => e.port),
      [2, 3],
    )
  })
})
