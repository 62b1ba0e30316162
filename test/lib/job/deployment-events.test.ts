/**
 * Following a deployment at its manager, against a real HTTP server on 127.0.0.1 answering as a manager: events
 * oldest first, each once across pages and repeated reads, until the deployment is STOPPED; a wait for a state
 * that ends in time, or with exit 124.
 */
import {strict as assert} from 'node:assert'
import type {IncomingMessage, ServerResponse} from 'node:http'

import {DeploymentClient} from '../../../src/lib/deployments/client/client.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {closeHttpAgents} from '../../../src/lib/http/client.js'
import {deploymentEvents, waitForStatus} from '../../../src/lib/job/deployment-events.js'
import {DEPLOYMENT_JSON as DEPLOYMENT} from '../../helpers/deployment-json.js'
import {startServer, type TestServer} from '../../helpers/http.js'

function answer(status: number, body: unknown) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, {'content-type': 'application/json'})
    res.end(JSON.stringify(body))
  }
}

describe('following a deployment', () => {
  let server: TestServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
    await closeHttpAgents()
  })
  const client = (url: string) => new DeploymentClient(url, () => ({}))

  it('reads events oldest first across pages and, following, prints each once until the deployment is STOPPED', async () => {
    const event = (n: number, at: string) => ({category: 'Deployment', type: `E${n}`, message: `m${n}`, created_at: at})
    let reads = 0
    server = await startServer((req, res) => {
      const url = new URL(req.url!, 'http://x')
      if (url.pathname.endsWith('/events')) {
        reads++
        // First read: two pages; later reads repeat the last instant's event and add one, as created_after may.
        if (reads === 1 && !url.searchParams.get('cursor')) {
          return answer(200, {events: [event(1, 'T1')], pagination: {cursor_next: 'p2', cursor_prev: null}})(req, res)
        }
        if (reads === 2) {
          return answer(200, {events: [event(2, 'T2')], pagination: {cursor_next: null, cursor_prev: null}})(req, res)
        }
        return answer(200, {events: [event(2, 'T2'), event(3, 'T3')], pagination: {cursor_next: null}})(req, res)
      }
      return answer(200, {...DEPLOYMENT, status: reads >= 3 ? 'STOPPED' : 'RUNNING'})(req, res)
    })
    const seen: string[] = []
    const end = await deploymentEvents(client(server.url), DEPLOYMENT.id, {
      follow: true,
      pollMs: 10,
      event: (e) => void seen.push(e.type),
    })
    assert.deepEqual(seen, ['E1', 'E2', 'E3'])
    assert.equal(end.status, 'STOPPED')
    assert.ok(
      server.seen.some((line) => line.includes('created_after=T2')),
      server.seen.join('\n'),
    )
  })

  it('waits for a state: returns it once read, exit 124 when it does not come in time', async () => {
    let reads = 0
    server = await startServer((req, res) =>
      answer(200, {...DEPLOYMENT, status: ++reads >= 3 ? 'STOPPED' : 'STOPPING'})(req, res),
    )
    const seen: string[] = []
    const status = await waitForStatus(client(server.url), DEPLOYMENT.id, (s) => s !== 'STOPPING', {
      timeoutMs: 10_000,
      pollMs: 10,
      progress: (s) => seen.push(s),
    })
    assert.equal(status, 'STOPPED')
    assert.deepEqual(seen, ['STOPPING', 'STOPPING', 'STOPPED'])
    await assert.rejects(
      waitForStatus(client(server.url), DEPLOYMENT.id, (s) => s === 'ARCHIVED', {timeoutMs: 50, pollMs: 10}),
      (e: GpunetError) => e.code === 'wait_timeout' && e.exitCode === ExitCode.TIMEOUT && e.fields.status === 'STOPPED',
    )
  })
})
