import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, request, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import WebSocket, {WebSocketServer} from 'ws'

import {Gateway} from '../../../src/lib/node/gateway.js'

const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'

/** A request to the gateway with the Host header of `host`. */
function send(
  gateway: Gateway,
  host: string,
  options: {method?: string; body?: string; accept?: string} = {},
): Promise<{status: number; body: string; type: string}> {
  const port = Number(new URL(gateway.url).port)
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {host: `${host}:${port}`}
    if (options.accept) headers.accept = options.accept
    const req = request(
      {host: '127.0.0.1', port, path: '/echo?x=1', method: options.method ?? 'GET', headers},
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({status: res.statusCode ?? 0, body, type: String(res.headers['content-type'])}))
      },
    )
    req.on('error', reject)
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
