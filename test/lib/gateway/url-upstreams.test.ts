/**
 * A stable URL in front of replicas this gateway does not run (`deployment serve`'s): each replica's own service URL,
 * here a second gateway's job URL (the localnet's node gateway), reached with its host, for requests and upgrades.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, request, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import WebSocket, {WebSocketServer} from 'ws'

import {Gateway} from '../../../src/lib/gateway/gateway.js'
import {eventually} from '../../helpers/eventually.js'

const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'

describe("gateway: a stable URL in front of replicas' own URLs", () => {
  let service: Server
  let node: Gateway
  let front: Gateway
  let port: number

  before(async () => {
    service = createServer((req, res) => res.end(`${req.method} ${req.url} host=${req.headers.host}`))
    new WebSocketServer({server: service}).on('connection', (ws) => ws.send('hello'))
    service.listen(0, '127.0.0.1')
    await once(service, 'listening')
    node = new Gateway()
    await node.listen(0)
    node.register(JOB, [80])
    node.ready(JOB, 80, (service.address() as AddressInfo).port)
    front = new Gateway()
    port = Number(new URL(await front.listen(0)).port)
    front.useDeployments({
      deploymentRoutes: async (deployment) =>
        deployment === 'dep1' ? [{job: JOB, ready: true, draining: false, url: node.jobUrl(JOB)}] : null,
    })
  })

  after(async () => {
    await front.close()
    await node.close()
    service.closeAllConnections()
    await new Promise((r) => service.close(r))
  })

  it("sends a request to the replica's URL with its host, and its count back to none", async () => {
    const answer = await new Promise<{status: number; body: string}>((resolve, reject) => {
      const req = request(
        {host: '127.0.0.1', port, path: '/x?y=1', method: 'POST', headers: {host: `dep1.deploy.localhost:${port}`}},
        (res) => {
          let body = ''
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
          res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
        },
      )
      req.on('error', reject)
      req.end('payload')
    })
    assert.equal(answer.status, 200)
    // The node gateway routed it on the job's host: the service sees the node gateway's host name.
    assert.equal(answer.body, `POST /x?y=1 host=${new URL(node.jobUrl(JOB)).host}`)
    await eventually('none in flight', 5000, async () => (front.traffic('dep1').inFlight === 0 ? true : undefined), 20)
  })

  it("tunnels an upgrade to the replica's URL", async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host: `dep1.deploy.localhost:${port}`}})
    const [message] = (await once(ws, 'message')) as [Buffer]
    assert.equal(message.toString(), 'hello')
    assert.equal(front.traffic('dep1').inFlight, 1, 'an open tunnel counts in flight')
    ws.close()
    await once(ws, 'close')
  })
})
