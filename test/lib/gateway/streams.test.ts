/**
 * Streams through the gateway (issue 58): services that send a first part, then wait on a gate the test opens.
 * Each client must hold the first part while the service still waits, which it never would if anything between them
 * buffered (the head held for the body, chunks gathered, a length-framed body read ahead, a WebSocket's messages):
 * through a deployment's stable URL, the network's load-balanced name and a job's own URL. Then what each does with
 * the streams open to a replica being retired: the stable URL drains them (they end, or the bound cuts them), the
 * network's name cuts them with the member, as the network does.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'

import WebSocket from 'ws'

import {Draining, drainJob} from '../../../src/lib/deployments/draining.js'
import {Gateway} from '../../../src/lib/gateway/gateway.js'
import {ensureGatewayCertificate} from '../../../src/lib/localnet/nodes/certificates.js'
import type {ReplicaRoute} from '../../../src/lib/gateway/stable-url.js'
import {networkNames} from '../../../src/lib/node/network-names.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {networkSdk} from '../../helpers/network-names.js'
import {
  openStream,
  STREAM_PATHS,
  streamingService,
  type StreamingService,
  streamParts,
} from '../../helpers/streaming-service.js'

const DEPLOYMENT = 'BVy3k1hRzFYgGUR2gC5UNuKs1iGnFakN8AhJ4n9MtT7d'
const JOBS = ['Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb', 'Hq8ZsPcGfkGx1X8PqM9Mx2s8pGqK4WmD8V2r7ZqPYbLm']
const NAMES = ['a', 'b']

describe('gateway: streams pass unbuffered, and a retired replica keeps them on the stable URL only', () => {
  let services: StreamingService[]
  let gateway: Gateway
  let port: number
  let routes: ReplicaRoute[]
  /** The network's load-balanced name of the deployment's operation `web` (a group of both jobs' port 8080). */
  let domain: string
  const stable = `${DEPLOYMENT.toLowerCase()}.deploy.localhost`

  beforeEach(async () => {
    const sdk = await networkSdk()
    const hash = sdk.createHash(`streams:${DEPLOYMENT}`, 45)
    domain = `${sdk.getExposeIdHash(hash, 'web', 0)}.node.localhost`
    services = [await streamingService(NAMES[0]!), await streamingService(NAMES[1]!)]
    gateway = new Gateway()
    port = Number(new URL(await gateway.listen(0)).port)
    routes = JOBS.map((job) => ({job, ready: true, draining: false}))
    gateway.useDeployments({
      deploymentRoutes: async (deployment) => (deployment === DEPLOYMENT.toLowerCase() ? routes : null),
    })
    for (const [i, job] of JOBS.entries()) {
      gateway.register(job, [8080])
      gateway.serveNames(job, networkNames({job, opIndex: 0, opId: 'web', deploymentHash: hash, ports: [{port: 8080}]}))
      gateway.ready(job, 8080, services[i]!.port)
    }
  })

  afterEach(async () => {
    await gateway.close()
    for (const service of services) await service.close()
  })

  const hosts = () => ({'stable URL': stable, "network's name": domain, "job's own URL": `${JOBS[0]}.node.localhost`})

  for (const path of STREAM_PATHS) {
    it(`passes ${path} on as the service sends it, through each URL`, async () => {
      for (const [what, host] of Object.entries(hosts())) {
        // The head came: for /head, nothing of the body was sent yet.
        const stream = await openStream(port, host, path)
        assert.equal(stream.status, 200, what)
        if (path !== '/head') await stream.until((body) => body.length > 0)
        const from = NAMES.find((name) => stream.body.includes(`"${name}"`) || stream.body.startsWith(name)) ?? 'a'
        const {first, last, type} = streamParts(path, from)
        assert.equal(stream.type, type, what)
        await stream.until(first)
        assert.equal(services[0]!.waiting + services[1]!.waiting, 1, `${what}: the service still holds its end`)
        for (const service of services) service.release()
        const body = await stream.done
        // /head's end names the replica that answered: either one for a name spread over both.
        assert.ok(body === first + last || (path === '/head' && /^[ab] at last$/.test(body)), `${what}: ${body}`)
      }
    })
  }

  it('passes each stream on as the service sends it over https too', async () => {
    const dir = tempDir()
    try {
      const certificate = await ensureGatewayCertificate(dir)
      const https = Number(new URL(await gateway.listenHttps(0, certificate)).port)
      for (const path of STREAM_PATHS) {
        const stream = await openStream(https, stable, path, certificate.ca)
        assert.equal(stream.status, 200, path)
        if (path !== '/head') await stream.until((body) => body.length > 0)
        const from = NAMES.find((name) => stream.body.includes(`"${name}"`) || stream.body.startsWith(name)) ?? 'a'
        const {first} = streamParts(path, from)
        await stream.until(first)
        assert.equal(services[0]!.waiting + services[1]!.waiting, 1, `${path}: the service still holds its end`)
        for (const service of services) service.release()
        await stream.done
      }
    } finally {
      removeDir(dir)
    }
  })

  it("passes a WebSocket's messages on as they are sent, both ways, through each URL", async () => {
    for (const [what, host] of Object.entries(hosts())) {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host}})
      const messages: string[] = []
      ws.on('message', (data) => messages.push(String(data)))
      await once(ws, 'message')
      const from = messages[0]!.replace('first from ', '')
      assert.ok(NAMES.includes(from), `${what}: ${messages[0]}`)
      ws.send('ping')
      await once(ws, 'message')
      assert.deepEqual(messages, [`first from ${from}`, 'echo ping'], what)
      assert.equal(services[0]!.waiting + services[1]!.waiting, 1, `${what}: the service still holds its last`)
      for (const service of services) service.release()
      await once(ws, 'message')
      assert.equal(messages[2], `last from ${from}`, what)
      ws.close()
      await once(ws, 'close')
    }
  })

  it('keeps the streams open to a replica drained until they end; new requests go to the others', async () => {
    // The deployment has one replica, a, when the streams open: both go to it.
    routes = [{job: JOBS[0]!, ready: true, draining: false}]
    const stream = await openStream(port, stable, '/ndjson')
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host: stable}})
    const [hello] = (await once(ws, 'message')) as [Buffer]
    assert.equal(String(hello), 'first from a')
    assert.equal(gateway.inFlight(JOBS[0]!), 2, 'the stream and the WebSocket are in flight to a')
    // A rotation: b is the replacement, a is retired.
    routes = [
      {job: JOBS[0]!, ready: true, draining: true},
      {job: JOBS[1]!, ready: true, draining: false},
    ]
    const draining = new Draining()
    draining.countInFlightWith((job) => gateway.inFlight(job))
    const lines: string[] = []
    const drained = drainJob({draining, log: (line) => lines.push(line)}, JOBS[0]!)
    const fresh = await openStream(port, stable, '/ndjson?tokens=1')
    assert.match(await fresh.done, /^\{"from":"b"/, 'a new request goes to the replacement')
    assert.equal(gateway.inFlight(JOBS[0]!), 2, 'what the drain waits for')
    services[0]!.release()
    const [last] = (await once(ws, 'message')) as [Buffer]
    assert.equal(String(last), 'last from a')
    ws.close()
    const {first, last: end} = streamParts('/ndjson', 'a')
    assert.equal(await stream.done, first + end, 'the stream ended as its service ended it')
    await drained
    assert.deepEqual(lines, [], 'nothing left in flight when the drain ended')
    assert.equal(gateway.inFlight(JOBS[0]!), 0)
  })

  it('cuts a stream still open at the drain bound when its replica stops', async () => {
    routes = [{job: JOBS[0]!, ready: true, draining: false}]
    const stream = await openStream(port, stable, '/sse')
    await stream.until('first')
    const draining = new Draining()
    draining.countInFlightWith((job) => gateway.inFlight(job))
    const lines: string[] = []
    await drainJob({draining, drainTimeoutMs: 100, log: (line) => lines.push(line)}, JOBS[0]!)
    assert.match(lines.join('\n'), /1 request\(s\) still in flight after draining/)
    // What the manager's stop does next: the job ends, its node takes its ports down.
    gateway.remove(JOBS[0]!)
    await assert.rejects(stream.done, /cut/)
  })

  it("cuts the streams through the network's name when their member goes: no drain there", async () => {
    const stream = await openStream(port, domain, '/ndjson')
    await stream.until('"first"')
    const from = stream.body.includes('"from":"a"') ? 0 : 1
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host: domain}})
    await once(ws, 'message')
    assert.equal(gateway.inFlight(JOBS[from]!), 0, "a drain does not wait for the network name's streams")
    // The group's round robin sent the WebSocket to the other member: both go.
    gateway.remove(JOBS[0]!)
    gateway.remove(JOBS[1]!)
    await assert.rejects(stream.done, /cut/)
    await once(ws, 'close')
  })
})
