/**
 * The network's own names on the gateway: a real gateway on 127.0.0.1 and real HTTP services, the names computed
 * with @nosana/sdk's own functions (what the network's CLI prints and its nodes register), told to the gateway as
 * the localnet's node tells it (node/network-names.ts). The groups' health checks run in the end-to-end test
 * (network-names.e2e.test.ts): here no member has a health path, so nothing waits on a clock.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import WebSocket, {WebSocketServer} from 'ws'

import {Gateway} from '../../../src/lib/gateway/gateway.js'
import {networkNames} from '../../../src/lib/node/network-names.js'
import {getAsHost, type NetworkSdk, networkSdk} from '../../helpers/network-names.js'

const JOBS = ['Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb', 'Hq8ZsPcGfkGx1X8PqM9Mx2s8pGqK4WmD8V2r7ZqPYbLm']
const POSTER = 'BVy3k1hRzFYgGUR2gC5UNuKs1iGnFakN8AhJ4n9MtT7d'

/** A service answering its name and port on every request. */
async function service(name: string): Promise<{server: Server; port: number}> {
  const server = createServer((_req, res) => res.end(name))
  new WebSocketServer({server}).on('connection', (ws) => ws.send(`hello from ${name}`))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {server, port: (server.address() as AddressInfo).port}
}

describe("gateway: the network's names of jobs' ports", () => {
  let sdk: NetworkSdk
  let gateway: Gateway
  let services: {server: Server; port: number}[]

  before(async () => {
    sdk = await networkSdk()
    services = [await service('a'), await service('b'), await service('a-metrics')]
  })

  beforeEach(async () => {
    gateway = new Gateway()
    await gateway.listen(0)
  })

  afterEach(() => gateway.close())

  /** A GET through the gateway with the Host header of `host`. */
  const send = (g: Gateway, host: string) => getAsHost(Number(new URL(g.url).port), host)

  after(async () => {
    for (const {server} of services) {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  /** Runs `job`'s operation `opId` (at `opIndex`) with `ports` served by `hostPorts`, as the localnet's node does. */
  function run(job: string, opIndex: number, opId: string, ports: number[], hostPorts: number[], hash?: string) {
    gateway.register(job, ports)
    const names = networkNames({job, opIndex, opId, deploymentHash: hash, ports: ports.map((port) => ({port}))})
    gateway.serveNames(job, names)
    ports.forEach((port, i) => gateway.ready(job, port, hostPorts[i]!))
  }

  it("answers a job's port at its expose-id hash, in any case; gpunet's own names stay", async () => {
    run(JOBS[0]!, 1, 'web', [8080, 9090], [services[0]!.port, services[2]!.port])
    const label = sdk.getExposeIdHash(JOBS[0]!, 1, 8080)
    assert.equal(label.length, 44)
    for (const host of [label, label.toLowerCase(), label.toUpperCase()])
      assert.deepEqual((await send(gateway, `${host}.node.localhost`)).body, 'a', host)
    assert.equal((await send(gateway, `${sdk.getExposeIdHash(JOBS[0]!, 1, 9090)}.node.localhost`)).body, 'a-metrics')
    assert.equal((await send(gateway, `${JOBS[0]}.node.localhost`)).body, 'a', "the job's own URL")
    assert.equal((await send(gateway, `${JOBS[0]}-9090.node.localhost`)).body, 'a-metrics', "the port's own URL")

    const ws = new WebSocket(`ws://127.0.0.1:${new URL(gateway.url).port}/`, {
      headers: {host: `${label}.node.localhost`},
    })
    const [message] = (await once(ws, 'message')) as [Buffer]
    assert.equal(message.toString(), 'hello from a', 'an upgrade through the network name')
    ws.close()
  })

  it('answers 404 for a 44-character label it does not hold, and for a network name no port serves', async () => {
    const unknown = sdk.getExposeIdHash(JOBS[1]!, 0, 80)
    const answer = await send(gateway, `${unknown}.node.localhost`)
    assert.equal(answer.status, 404)
    assert.equal(answer.reason, 'not-ready', "not a name it holds: gpunet's own not-found page, as for any label")
    gateway.register(JOBS[1]!, [80])
    gateway.serveNames(JOBS[1]!, networkNames({job: JOBS[1]!, opIndex: 0, opId: 'web', ports: [{port: 80}]}))
    const starting = await send(gateway, `${unknown}.node.localhost`)
    assert.deepEqual([starting.status, starting.reason], [404, 'no-member'], 'a name whose port is not up: as frps')
    assert.match(starting.type, /text\/html/)
    gateway.remove(JOBS[1]!)
    assert.equal((await send(gateway, `${unknown}.node.localhost`)).reason, 'not-ready', 'its job gone, so is the name')
  })

  it("spreads a deployment's domain over its jobs, the operation's first port; none left is frps's 404", async () => {
    const hash = sdk.createHash(`my-service:${POSTER}`, 45)
    const domain = `${sdk.getExposeIdHash(hash, 'web', 0)}.node.localhost`
    run(JOBS[0]!, 0, 'web', [8080, 9090], [services[0]!.port, services[2]!.port], hash)
    run(JOBS[1]!, 0, 'web', [8080, 9090], [services[1]!.port, services[2]!.port], hash)
    const bodies = new Set<string>()
    for (let i = 0; i < 6; i++) bodies.add((await send(gateway, domain.toUpperCase())).body)
    assert.deepEqual([...bodies].sort(), ['a', 'b'], 'both members of the group <hash>-8080, never port 9090')
    gateway.withdraw(JOBS[0]!, [8080, 9090])
    for (let i = 0; i < 3; i++) assert.equal((await send(gateway, domain)).body, 'b')
    gateway.remove(JOBS[1]!)
    assert.equal((await send(gateway, domain)).status, 404, 'its last member gone, the domain is no name')
    // Held by no group, the domain goes to the group that claims it next: here the other port's.
    run(JOBS[1]!, 0, 'web', [9090], [services[2]!.port], hash)
    assert.equal((await send(gateway, domain)).body, 'a-metrics')
  })

  it('keeps the domain with the group that holds it while it has a member (frps refuses a second group)', async () => {
    const hash = sdk.createHash(`two-ports:${POSTER}`, 45)
    const domain = `${sdk.getExposeIdHash(hash, 'web', 0)}.node.localhost`
    gateway.register(JOBS[0]!, [8080])
    gateway.serveNames(
      JOBS[0]!,
      networkNames({job: JOBS[0]!, opIndex: 0, opId: 'web', deploymentHash: hash, ports: [{port: 8080}]}),
    )
    const empty = await send(gateway, domain)
    assert.deepEqual([empty.status, empty.reason], [404, 'no-member'], 'a member not up yet: at once, no holding')
    run(JOBS[1]!, 0, 'web', [9090], [services[2]!.port], hash)
    assert.equal((await send(gateway, domain)).body, 'a-metrics', 'the only group with a member up holds it')
    gateway.ready(JOBS[0]!, 8080, services[0]!.port)
    for (let i = 0; i < 3; i++) assert.equal((await send(gateway, domain)).body, 'a-metrics', 'and keeps it')
  })
})
