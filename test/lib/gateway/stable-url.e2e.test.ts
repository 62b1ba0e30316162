/**
 * A deployment's stable URL on the gateway: real replicas (HTTP servers on 127.0.0.1), the gateway's own routes,
 * and a DeploymentRoutes that says which replicas are ready and draining, as the localnet's does.
 */
import {strict as assert} from 'node:assert'
import {type ChildProcess, spawn} from 'node:child_process'
import {once} from 'node:events'
import {createServer, request, type Server} from 'node:http'
import {type AddressInfo, connect, type Socket} from 'node:net'

import WebSocket, {WebSocketServer} from 'ws'

import {Draining} from '../../../src/lib/deployments/draining.js'
import {GATEWAY_ANSWER_HEADER} from '../../../src/lib/node/gateway-answer.js'
import {Gateway} from '../../../src/lib/gateway/gateway.js'
import {Ejections, type ReplicaRoute} from '../../../src/lib/gateway/stable-url.js'
import {eventually} from '../../helpers/eventually.js'

const DEPLOYMENT = 'BVy3k1hRzFYgGUR2gC5UNuKs1iGnFakN8AhJ4n9MtT7d'
const JOBS = ['Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb', 'Hq8ZsPcGfkGx1X8PqM9Mx2s8pGqK4WmD8V2r7ZqPYbLm']

interface Replica {
  server: Server
  port: number
  /** Requests it answered. */
  served: number
  /** Requests it received (answered, held or reset). */
  received: number
  /** Held requests, answered when released. */
  held: (() => void)[]
  hold: boolean
  /** Resets each connection instead of answering: a process dying under its kept-alive connections. */
  reset: boolean
}

async function replica(name: string): Promise<Replica> {
  const r = {served: 0, received: 0, held: [], hold: false, reset: false} as unknown as Replica
  r.server = createServer((req, res) => {
    r.received++
    if (r.reset) return void req.socket.destroy()
    r.served++
    const answer = () => res.end(`${name} ${req.method}`)
    if (r.hold) r.held.push(answer)
    else answer()
  })
  const wss = new WebSocketServer({server: r.server})
  wss.on('connection', (ws) => ws.send(`hello from ${name}`))
  r.server.listen(0, '127.0.0.1')
  await once(r.server, 'listening')
  r.port = (r.server.address() as AddressInfo).port
  return r
}

async function closeReplica(r: Replica): Promise<void> {
  r.server.closeAllConnections()
  await new Promise((resolve) => r.server.close(resolve))
}

/**
 * A port on 127.0.0.1 whose listener never accepts (another process, its event loop blocked): the kernel completes
 * the first connections (they are accepted and never answered, as by a dead container's port reservation), then,
 * its queue full, leaves the next ones unanswered (a connection that never completes, as to a vanished address).
 */
async function deafPort(): Promise<{port: number; child: ChildProcess; fill: () => Promise<Socket[]>}> {
  const code =
    "const s = require('net').createServer().listen({port: 0, host: '127.0.0.1', backlog: 1}, () => {" +
    'process.stdout.write(s.address().port + "\\n"); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0) })'
  const child = spawn(process.execPath, ['-e', code], {stdio: ['ignore', 'pipe', 'inherit']})
  const [line] = (await once(child.stdout!, 'data')) as [Buffer]
  const port = Number(line.toString().trim())
  /** Connections that fill the queue: the next ones never complete. */
  const fill = async () => {
    const sockets: Socket[] = []
    for (let i = 0; i < 2; i++) {
      const socket = connect(port, '127.0.0.1')
      socket.on('error', () => {})
      await once(socket, 'connect')
      sockets.push(socket)
    }
    return sockets
  }
  return {port, child, fill}
}

/** A request through the gateway with the Host header of `host`. */
function send(
  gateway: Gateway,
  host: string,
  options: {method?: string; body?: string} = {},
): Promise<{status: number; body: string; reason: string | undefined; retryAfter: string | undefined}> {
  const port = Number(new URL(gateway.url).port)
  return new Promise((resolve, reject) => {
    const req = request(
      {host: '127.0.0.1', port, path: '/', method: options.method ?? 'GET', headers: {host: `${host}:${port}`}},
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            reason: res.headers[GATEWAY_ANSWER_HEADER] as string | undefined,
            retryAfter: res.headers['retry-after'] as string | undefined,
          }),
        )
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}

describe('gateway: a deployment stable URL', () => {
  let gateway: Gateway
  let replicas: Replica[]
  /** What the provider answers: the replicas of DEPLOYMENT, by job. */
  let routes: ReplicaRoute[]
  const asked: {deployment: string; port: number | null}[] = []
  const host = `${DEPLOYMENT.toLowerCase()}.deploy.localhost`

  beforeEach(async () => {
    replicas = [await replica('a'), await replica('b')]
    gateway = new Gateway()
    await gateway.listen(0)
    asked.length = 0
    routes = JOBS.map((job) => ({job, ready: true, draining: false}))
    gateway.useDeployments({
      async deploymentRoutes(deployment, port) {
        asked.push({deployment, port})
        return deployment === DEPLOYMENT.toLowerCase() ? routes : null
      },
    })
    for (const [i, job] of JOBS.entries()) {
      gateway.register(job, [8080])
      gateway.ready(job, 8080, replicas[i]!.port)
    }
  })

  afterEach(async () => {
    await gateway.close()
    for (const r of replicas) await closeReplica(r)
  })

  it('spreads requests over the ready replicas, at the deployment URL and at <deployment>-<port>', async () => {
    assert.equal(
      gateway.deploymentUrl(DEPLOYMENT),
      `http://${DEPLOYMENT}.deploy.localhost:${new URL(gateway.url).port}/`,
    )
    const bodies: string[] = []
    for (let i = 0; i < 10; i++) bodies.push((await send(gateway, host)).body)
    assert.deepEqual([replicas[0]!.served, replicas[1]!.served], [5, 5], bodies.join(', '))
    assert.equal((await send(gateway, `${DEPLOYMENT.toLowerCase()}-8080.deploy.localhost`)).status, 200)
    assert.deepEqual(asked.at(-1), {deployment: DEPLOYMENT.toLowerCase(), port: 8080})
    assert.deepEqual(asked[0], {deployment: DEPLOYMENT.toLowerCase(), port: null})
    // A port no replica serves here: none is ready for it.
    assert.equal((await send(gateway, `${DEPLOYMENT.toLowerCase()}-9999.deploy.localhost`)).status, 503)
  })

  it('sends nothing to a replica that is not ready (its health checks) or draining; in-flight requests finish', async () => {
    routes[0]!.ready = false
    for (let i = 0; i < 4; i++) assert.equal((await send(gateway, host)).body, 'b GET')
    routes[0]!.ready = true
    // A slow request on replica b, then b drains: it gets nothing new, and the one in flight still finishes.
    replicas[1]!.hold = true
    let slow: Promise<{body: string}> | undefined
    for (let i = 0; i < 2 && !slow; i++) {
      const pending = send(gateway, host)
      let answered = false
      pending.then(
        () => (answered = true),
        () => (answered = true),
      )
      await eventually(
        'the request held by b or answered by a',
        5000,
        async () => (answered || replicas[1]!.held.length > 0 ? true : undefined),
        10,
      )
      if (replicas[1]!.held.length > 0) slow = pending
      else await pending
    }
    assert.ok(slow, 'a request reached replica b')
    assert.equal(gateway.inFlight(JOBS[1]!), 1)
    routes[1]!.draining = true
    const servedBefore = replicas[1]!.served
    for (let i = 0; i < 6; i++) assert.equal((await send(gateway, host)).body, 'a GET')
    assert.equal(replicas[1]!.served, servedBefore, 'the draining replica got no new request')
    replicas[1]!.held.shift()!()
    assert.equal((await slow).body, 'b GET')
    // Counted done when the gateway's answer closes, a moment after the client has it.
    await eventually(
      'no request in flight to b',
      5000,
      async () => (gateway.inFlight(JOBS[1]!) === 0 ? true : undefined),
      10,
    )
    assert.equal(gateway.inFlight(JOBS[1]!), 0)
  })

  it("a drain (the manager's, before it ends a job) returns only once the request in flight to the replica is answered", async () => {
    const draining = new Draining()
    draining.countInFlightWith((job) => gateway.inFlight(job))
    gateway.useDeployments({
      deploymentRoutes: async () => routes.map((r) => ({...r, draining: draining.isDraining(r.job)})),
    })
    replicas[0]!.hold = true
    const slow = send(gateway, host)
    await eventually('the request held by a', 5000, async () => (replicas[0]!.held.length > 0 ? true : undefined), 10)
    let drained = false
    const drain = draining.drain(JOBS[0]!).then(() => (drained = true))
    // Meanwhile every new request goes to the other replica, and the drain waits.
    for (let i = 0; i < 4; i++) assert.equal((await send(gateway, host)).body, 'b GET')
    assert.equal(drained, false, 'still waiting for the request in flight')
    replicas[0]!.held.shift()!()
    assert.deepEqual(await slow, {...(await slow), status: 200, body: 'a GET'})
    await drain
    assert.equal(gateway.inFlight(JOBS[0]!), 0)
  })

  it('answers 503 with a clear body (and Retry-After) when no replica is ready, and 404 for an unknown deployment', async () => {
    routes[0]!.ready = false
    routes[1]!.draining = true
    const started = Date.now()
    const none = await send(gateway, host)
    assert.ok(Date.now() - started < 2000, 'it does not hang')
    assert.equal(none.status, 503)
    assert.equal(none.reason, 'no-replica')
    assert.equal(none.retryAfter, '1')
    const body = JSON.parse(none.body) as {error: string; message: string}
    assert.equal(body.error, 'unavailable')
    assert.match(body.message, /No replica of deployment \S+ is ready to serve \(2 replica\(s\), 1 draining\)/)
    routes = []
    assert.equal((await send(gateway, host)).status, 503)
    const unknown = await send(gateway, 'nosuchdeployment.deploy.localhost')
    assert.equal(unknown.status, 404)
    assert.equal(unknown.reason, 'no-service')
    assert.match(JSON.parse(unknown.body).message, /No deployment nosuchdeployment runs here/)
  })

  it('sends a GET again to another replica when the chosen one refuses the connection; a POST with a body is not', async () => {
    // Replica a is gone (its process died) but still listed as ready: the gateway has not heard yet.
    await closeReplica(replicas[0]!)
    const posts: {status: number}[] = []
    for (let i = 0; i < 2; i++) posts.push(await send(gateway, host, {method: 'POST', body: 'x'}))
    assert.deepEqual(posts.map((p) => p.status).sort(), [200, 502], 'one POST reached b, the other was not resent')
    for (let i = 0; i < 6; i++) {
      const answer = await send(gateway, host)
      assert.deepEqual([answer.status, answer.body], [200, 'b GET'])
    }
  })

  it('sends a GET again to another replica when the chosen one resets the connection before answering', async () => {
    replicas[0]!.reset = true
    for (let i = 0; i < 6; i++) {
      const answer = await send(gateway, host)
      assert.deepEqual([answer.status, answer.body], [200, 'b GET'])
    }
    assert.equal(replicas[1]!.served, 6)
  })

  it('sends a GET to another replica when the chosen one takes no connection within the connect timeout', async () => {
    await gateway.close()
    gateway = new Gateway({connectTimeoutMs: 300})
    await gateway.listen(0)
    gateway.useDeployments({deploymentRoutes: async () => routes})
    const deaf = await deafPort()
    const filling = await deaf.fill()
    try {
      gateway.register(JOBS[0]!, [8080])
      gateway.ready(JOBS[0]!, 8080, deaf.port)
      gateway.register(JOBS[1]!, [8080])
      gateway.ready(JOBS[1]!, 8080, replicas[1]!.port)
      const started = Date.now()
      for (let i = 0; i < 4; i++) assert.deepEqual((await send(gateway, host)).body, 'b GET')
      // One request waited for the connect timeout; then replica a was ejected, and the next went straight to b.
      assert.ok(Date.now() - started < 1500, `${Date.now() - started} ms`)
      assert.equal(replicas[1]!.served, 4)
    } finally {
      for (const socket of filling) socket.destroy()
      deaf.child.kill('SIGKILL')
    }
  })

  it('sends a GET unanswered by a replica whose service is withdrawn (it accepted, then its process died) to another', async () => {
    const deaf = await deafPort()
    try {
      gateway.register(JOBS[0]!, [8080])
      gateway.ready(JOBS[0]!, 8080, deaf.port)
      routes[1]!.ready = false
      // Only replica a is ready: the connection is accepted (the kernel's), the request never answered.
      const pending = send(gateway, host)
      await eventually(
        'the request forwarded to a',
        5000,
        async () => (gateway.inFlight(JOBS[0]!) > 0 ? true : undefined),
        10,
      )
      routes[1]!.ready = true
      let settled = false
      void pending.then(() => (settled = true))
      // A window in which nothing may happen: the request must stay with a, unanswered.
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(settled, false, 'still waiting for replica a')
      // Its node sees the service end and takes its port down: the request goes to b at once.
      gateway.withdraw(JOBS[0]!, [8080])
      assert.deepEqual([(await pending).status, (await pending).body], [200, 'b GET'])
      // Not resent when it carries a body: a POST waiting on a withdrawn service is answered 502.
      gateway.register(JOBS[0]!, [8080])
      gateway.ready(JOBS[0]!, 8080, deaf.port)
      routes[1]!.ready = false
      // The GET counts at a until its answer closes: only then does a count tell that the POST reached a.
      await eventually(
        'the GET no longer at a',
        5000,
        async () => (gateway.inFlight(JOBS[0]!) === 0 ? true : undefined),
        10,
      )
      const post = send(gateway, host, {method: 'POST', body: 'x'})
      await eventually(
        'the POST forwarded to a',
        5000,
        async () => (gateway.inFlight(JOBS[0]!) > 0 ? true : undefined),
        10,
      )
      routes[1]!.ready = true
      gateway.remove(JOBS[0]!)
      assert.equal((await post).status, 502)
      assert.equal(replicas[1]!.served, 1)
    } finally {
      deaf.child.kill('SIGKILL')
    }
  })

  it('ejects a replica that reset a request: the next ones skip it, until the ejection ends or its node reports it again', async () => {
    await gateway.close()
    gateway = new Gateway({ejectionMs: 400})
    await gateway.listen(0)
    gateway.useDeployments({deploymentRoutes: async () => routes})
    for (const [i, job] of JOBS.entries()) {
      gateway.register(job, [8080])
      gateway.ready(job, 8080, replicas[i]!.port)
    }
    replicas[0]!.reset = true
    for (let i = 0; i < 6; i++) assert.equal((await send(gateway, host)).body, 'b GET')
    assert.equal(replicas[0]!.received, 1, 'only the first request met the failing replica')
    // The ejection ends: replica a (answering again) takes its turns.
    replicas[0]!.reset = false
    // Fixed: the 400 ms ejection runs out on the gateway's clock, with nothing to show for it until a request comes.
    await new Promise((resolve) => setTimeout(resolve, 450))
    const bodies = []
    for (let i = 0; i < 4; i++) bodies.push((await send(gateway, host)).body)
    assert.deepEqual(bodies.sort(), ['a GET', 'a GET', 'b GET', 'b GET'])
    // Ejected again, then its node says it is not ready and later ready again: it serves from then on.
    replicas[0]!.reset = true
    for (let i = 0; i < 2; i++) assert.equal((await send(gateway, host)).body, 'b GET')
    const received = replicas[0]!.received
    replicas[0]!.reset = false
    routes[0]!.ready = false
    assert.equal((await send(gateway, host)).body, 'b GET')
    routes[0]!.ready = true
    const after = []
    for (let i = 0; i < 4; i++) after.push((await send(gateway, host)).body)
    assert.deepEqual(after.sort(), ['a GET', 'a GET', 'b GET', 'b GET'])
    assert.equal(replicas[0]!.received, received + 2)
  })

  it('tries the ejected replicas when every ready one is ejected, rather than answer 503', async () => {
    replicas[0]!.reset = true
    replicas[1]!.reset = true
    assert.equal((await send(gateway, host)).status, 502)
    replicas[0]!.reset = false
    replicas[1]!.reset = false
    assert.deepEqual([(await send(gateway, host)).status], [200])
  })

  it('passes WebSocket upgrades through to a ready replica, and refuses them with 503 when none is', async () => {
    routes[0]!.draining = true
    const port = new URL(gateway.url).port
    const socket = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host: `${host}:${port}`}})
    const [message] = (await once(socket, 'message')) as [Buffer]
    assert.equal(message.toString(), 'hello from b')
    socket.close()
    routes[1]!.ready = false
    const refused = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host: `${host}:${port}`}})
    const [error] = (await once(refused, 'error')) as [Error]
    assert.match(error.message, /503/)
  })
})

describe('Ejections', () => {
  it('ejects a job for the ejection time (host names lowercased), ends it early when forgotten, and stays bounded', () => {
    const ejections = new Ejections(1000)
    ejections.eject('JobA', 0)
    assert.equal(ejections.isEjected('joba', 999), true)
    assert.equal(ejections.isEjected('JobA', 1000), false)
    ejections.eject('JobA', 2000)
    ejections.forget('JOBA')
    assert.equal(ejections.isEjected('JobA', 2001), false)
    for (let i = 0; i < 10_050; i++) ejections.eject(`job${i}`, i)
    assert.equal(ejections.isEjected('job10049', 10_049), true)
  })
})
