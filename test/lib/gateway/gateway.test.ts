import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, request, type Server} from 'node:http'
import {type AddressInfo, connect, createServer as createNetServer, type Server as NetServer} from 'node:net'

import WebSocket, {WebSocketServer} from 'ws'

import {Gateway} from '../../../src/lib/gateway/gateway.js'

const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'

/** A request to the gateway with the Host header of `host`. */
function send(
  gateway: Gateway,
  host: string,
  options: {method?: string; body?: string; accept?: string; timeoutMs?: number} = {},
): Promise<{status: number; body: string; type: string; gateway?: string}> {
  const port = Number(new URL(gateway.url).port)
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {host: `${host}:${port}`}
    if (options.accept) headers.accept = options.accept
    // Node frames a DELETE's body only when told its length.
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body))
    const req = request(
      {host: '127.0.0.1', port, path: '/echo?x=1', method: options.method ?? 'GET', headers},
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('error', reject)
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            type: String(res.headers['content-type']),
            gateway: res.headers['x-gpunet-gateway'] as string | undefined,
          }),
        )
      },
    )
    req.on('error', reject)
    if (options.timeoutMs !== undefined)
      req.setTimeout(options.timeoutMs, () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)))
    req.end(options.body)
  })
}

describe('node gateway', () => {
  let gateway: Gateway
  let upstream: Server
  let upstreamPort: number

  before(async () => {
    upstream = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => (body += chunk.toString()))
      req.on('end', () => res.end(`${req.method} ${req.url} ${body}`))
    })
    const wss = new WebSocketServer({server: upstream})
    wss.on('connection', (ws) => {
      ws.send('hello')
      ws.on('message', (data: Buffer) => ws.send(`echo:${data.toString()}`))
    })
    upstream.listen(0, '127.0.0.1')
    await once(upstream, 'listening')
    upstreamPort = (upstream.address() as AddressInfo).port
    gateway = new Gateway()
    await gateway.listen(0)
  })

  after(async () => {
    await gateway.close()
    upstream.closeAllConnections()
    await new Promise((r) => upstream.close(r))
  })

  it('answers page-not-found, JSON or HTML, for unknown hosts and services that are not ready', async () => {
    assert.match(gateway.url, /^http:\/\/node\.localhost:\d+$/)
    const unknown = await send(gateway, 'node.localhost')
    assert.equal(unknown.status, 404)
    assert.equal(JSON.parse(unknown.body).error, 'not_found')
    gateway.register(JOB, [80])
    const starting = await send(gateway, `${JOB}.node.localhost`, {accept: 'text/html'})
    assert.equal(starting.status, 404)
    assert.match(starting.type, /text\/html/)
    assert.match(starting.body, new RegExp(`No service of job ${JOB.toLowerCase()} is ready`))
  })

  it('proxies requests with their method, path and body once ready, whatever the case of the host name', async () => {
    gateway.register(JOB, [80])
    gateway.ready(JOB, 80, upstreamPort)
    const answer = await send(gateway, `${JOB.toLowerCase()}.node.localhost`, {method: 'POST', body: 'payload'})
    assert.deepEqual({status: answer.status, body: answer.body}, {status: 200, body: 'POST /echo?x=1 payload'})
    assert.equal(gateway.jobUrl(JOB), `http://${JOB}.${new URL(gateway.url).host}/`)
  })

  // PUT and DELETE may be sent again to another replica, but only without a body: the body streams through once,
  // and a request sent again without its body waits for bytes that never come.
  it('passes the body of a PUT and a DELETE, at the job URL and through a stable URL', async () => {
    gateway.register(JOB, [80])
    gateway.ready(JOB, 80, upstreamPort)
    gateway.useDeployments({deploymentRoutes: async () => [{job: JOB, ready: true, draining: false}]})
    for (const host of [`${JOB}.node.localhost`, 'dep1.deploy.localhost'])
      for (const method of ['PUT', 'DELETE']) {
        const answer = await send(gateway, host, {method, body: `${method} body`, timeoutMs: 2000})
        assert.deepEqual(
          {status: answer.status, body: answer.body},
          {status: 200, body: `${method} /echo?x=1 ${method} body`},
          `${method} at ${host}`,
        )
      }
  })

  it('serves each exposed port at <job>-<port>, the first also at the job URL, each once it is ready', async () => {
    gateway.register(JOB, [80, 9000])
    gateway.ready(JOB, 9000, upstreamPort)
    assert.equal((await send(gateway, `${JOB}.node.localhost`)).status, 404, 'port 80 is not ready yet')
    assert.equal((await send(gateway, `${JOB}-80.node.localhost`)).status, 404)
    assert.equal((await send(gateway, `${JOB}-9000.node.localhost`)).status, 200)
    assert.equal((await send(gateway, `${JOB}-9001.node.localhost`)).status, 404, 'a port the job does not expose')
    gateway.ready(JOB, 80, upstreamPort)
    assert.equal((await send(gateway, `${JOB}.node.localhost`)).status, 200)
    assert.equal((await send(gateway, `${JOB}-80.node.localhost`)).status, 200)
    assert.equal(gateway.jobUrl(JOB, 9000), `http://${JOB}-9000.${new URL(gateway.url).host}/`)
    gateway.remove(JOB)
    assert.equal((await send(gateway, `${JOB}-9000.node.localhost`)).status, 404)
  })

  it('passes websocket upgrades through', async () => {
    gateway.register(JOB, [80])
    gateway.ready(JOB, 80, upstreamPort)
    const port = new URL(gateway.url).port
    const socket = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host: `${JOB}.node.localhost:${port}`}})
    const messages: string[] = []
    socket.on('message', (data: Buffer) => {
      messages.push(data.toString())
      if (messages.length === 1) socket.send('ping')
    })
    while (messages.length < 2) await once(socket, 'message')
    socket.close()
    assert.deepEqual(messages, ['hello', 'echo:ping'])
  })

  it('takes a service down: 404 again, and upgrades refused', async () => {
    gateway.register(JOB, [80])
    gateway.ready(JOB, 80, upstreamPort)
    gateway.remove(JOB)
    assert.equal((await send(gateway, `${JOB}.node.localhost`)).status, 404)
    const port = new URL(gateway.url).port
    const socket = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host: `${JOB}.node.localhost:${port}`}})
    const [error] = (await once(socket, 'error')) as [Error]
    assert.match(error.message, /404/)
  })
})

describe('node gateway, before a service that answers what HTTP does not allow', () => {
  const GOOD = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin'
  let gateway: Gateway
  let good: Server
  let hostile: NetServer
  /** What the hostile service writes, byte for byte, once it has read a request's headers. */
  let raw = ''

  before(async () => {
    good = createServer((_req, res) => res.end('fine'))
    good.listen(0, '127.0.0.1')
    await once(good, 'listening')
    hostile = createNetServer((socket) => {
      let seen = ''
      socket.on('error', () => {})
      socket.on('data', (chunk: Buffer) => {
        seen += chunk.toString('latin1')
        if (seen.includes('\r\n\r\n')) socket.end(Buffer.from(raw, 'latin1'))
      })
    })
    hostile.listen(0, '127.0.0.1')
    await once(hostile, 'listening')
    gateway = new Gateway()
    await gateway.listen(0)
    gateway.register(JOB, [80])
    gateway.ready(JOB, 80, (hostile.address() as AddressInfo).port)
    gateway.register(GOOD, [80])
    gateway.ready(GOOD, 80, (good.address() as AddressInfo).port)
  })

  after(async () => {
    await gateway.close()
    good.closeAllConnections()
    await new Promise((r) => good.close(r))
    await new Promise((r) => hostile.close(r))
  })

  const answers: [string, string][] = [
    ['status 000', 'HTTP/1.1 000 X\r\ncontent-length: 2\r\n\r\nhi'],
    ['status 099', 'HTTP/1.1 099 X\r\ncontent-length: 2\r\n\r\nhi'],
    ['status 600', 'HTTP/1.1 600 X\r\ncontent-length: 2\r\n\r\nhi'],
    ['status 999', 'HTTP/1.1 999 X\r\ncontent-length: 2\r\n\r\nhi'],
    ['status 101 to a request that asked for no upgrade', 'HTTP/1.1 101 Switching\r\ncontent-length: 2\r\n\r\nhi'],
    ['a header value with a control character', 'HTTP/1.1 200 OK\r\nx-a: a\x7fb\r\ncontent-length: 2\r\n\r\nhi'],
    ['a header name with a space', 'HTTP/1.1 200 OK\r\nx a: b\r\ncontent-length: 2\r\n\r\nhi'],
    ['two content lengths', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nhi'],
  ]
  for (const [what, bytes] of answers)
    it(`answers 502 for ${what}, and serves the next request`, async () => {
      raw = bytes
      const answer = await send(gateway, `${JOB}.node.localhost`)
      assert.equal(answer.status, 502)
      assert.equal(JSON.parse(answer.body).error, 'bad_gateway')
      assert.equal(answer.gateway, 'invalid-answer', "the answer is the gateway's own")
      assert.deepEqual(await send(gateway, `${GOOD}.node.localhost`).then((a) => [a.status, a.body]), [200, 'fine'])
    })

  const broken: [string, string][] = [
    ['a body shorter than its content-length', 'HTTP/1.1 200 OK\r\ncontent-length: 20\r\n\r\nhi'],
    ['a chunk size that is no number', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhi\r\n'],
  ]
  for (const [what, bytes] of broken)
    it(`ends the client's connection for ${what} (its status is sent), and serves the next request`, async () => {
      raw = bytes
      await assert.rejects(send(gateway, `${JOB}.node.localhost`), /aborted|socket hang up|ECONNRESET/)
      assert.equal((await send(gateway, `${GOOD}.node.localhost`)).status, 200)
    })

  it("answers 502 for a status outside 100-599 through a deployment's stable URL", async () => {
    gateway.useDeployments({
      deploymentRoutes: async () => [{job: JOB, ready: true, draining: false}],
    })
    raw = 'HTTP/1.1 000 X\r\ncontent-length: 2\r\n\r\nhi'
    assert.equal((await send(gateway, 'dep1.deploy.localhost')).status, 502)
    assert.equal((await send(gateway, `${GOOD}.node.localhost`)).status, 200)
  })
})

describe('node gateway, before a client that resets its connection', () => {
  it('outlives an upgrade reset while it looks up the replicas of a deployment', async () => {
    const gateway = new Gateway()
    await gateway.listen(0)
    let looked = 0
    gateway.useDeployments({
      deploymentRoutes: async () => {
        looked++
        await new Promise((r) => setTimeout(r, 100))
        return null
      },
    })
    const port = Number(new URL(gateway.url).port)
    try {
      const socket = connect(port, '127.0.0.1')
      await once(socket, 'connect')
      socket.write(
        `GET / HTTP/1.1\r\nhost: dep1.deploy.localhost:${port}\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n`,
      )
      while (looked === 0) await new Promise((r) => setTimeout(r, 5))
      socket.resetAndDestroy()
      await new Promise((r) => setTimeout(r, 300))
      assert.equal((await send(gateway, 'dep1.deploy.localhost')).status, 404)
    } finally {
      await gateway.close()
    }
  })
})
