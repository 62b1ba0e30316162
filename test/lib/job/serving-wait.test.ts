/**
 * `deployment start --wait` and `revise --wait` (issue 59): a real HTTP server on 127.0.0.1 answers as a manager.
 * The wait ends once the deployment is RUNNING with every replica ready, or fails as the deployment does; a
 * revision rolled back 10 s later was exit 0 without it.
 */
import {strict as assert} from 'node:assert'
import type {IncomingMessage, ServerResponse} from 'node:http'

import {DeploymentClient} from '../../../src/lib/deployments/client/client.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {closeHttpAgents} from '../../../src/lib/http/client.js'
import {latestEventTime, waitUntilServing} from '../../../src/lib/job/deployment-events.js'
import {DEPLOYMENT_JSON as DEPLOYMENT} from '../../helpers/deployment-json.js'
import {startServer, type TestServer} from '../../helpers/http.js'

interface Manager {
  status: () => string
  jobs: () => {job: string; state: string; revision?: number}[]
  events?: () => {category: string; type: string; message: string; created_at: string}[]
  extra?: () => Record<string, unknown>
}

function manager(m: Manager) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://x')
    const send = (body: unknown) => {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify(body))
    }
    if (url.pathname.endsWith('/jobs')) return send({jobs: m.jobs(), pagination: {cursor_next: null}})
    if (url.pathname.endsWith('/events')) {
      const after = url.searchParams.get('created_after')
      let events = (m.events?.() ?? []).filter((e) => !after || e.created_at >= after)
      if (url.searchParams.get('sort_order') === 'desc') events = [...events].reverse()
      return send({events, pagination: {cursor_next: null}})
    }
    return send({...DEPLOYMENT, replicas: 2, status: m.status(), ...m.extra?.()})
  }
}

const running = (job: string, revision = 1) => ({job, state: 'RUNNING', revision})
const event = (type: string, message: string, at: string) => ({category: 'Deployment', type, message, created_at: at})

async function failure(promise: Promise<unknown>): Promise<GpunetError> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof GpunetError, String(error))
    return error
  }
  assert.fail('the wait did not fail')
}

describe('waiting until a deployment serves (start --wait, revise --wait)', () => {
  let server: TestServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
    await closeHttpAgents()
  })
  const client = () => new DeploymentClient(server!.url, () => ({}))
  const options = {timeoutMs: 5000, pollMs: 5}

  it('returns once RUNNING with as many RUNNING jobs as replicas, and every endpoint online', async () => {
    let reads = 0
    server = await startServer(
      manager({
        status: () => (++reads < 3 ? 'STARTING' : 'RUNNING'),
        jobs: () => (reads < 5 ? [running('A'), {job: 'B', state: 'QUEUED'}] : [running('A'), running('B')]),
        extra: () => ({endpoints: [{opId: 'svc', port: 80, url: 'http://x', online: reads >= 7}]}),
      }),
    )
    const serving = await waitUntilServing(client(), DEPLOYMENT.id, options)
    assert.equal(serving.ready, 2)
    assert.equal(serving.deployment.status, 'RUNNING')
    assert.ok(reads >= 7, `returned at read ${reads}, before the endpoint was online`)
  })

  it('fails as the deployment does: ERROR 8, INSUFFICIENT_FUNDS 4, STOPPED 9; and 124 once out of time', async () => {
    for (const [status, exit, code] of [
      ['ERROR', ExitCode.JOB_FAILED, 'deployment_failed'],
      ['INSUFFICIENT_FUNDS', ExitCode.INSUFFICIENT_BALANCE, 'insufficient_funds'],
      ['STOPPED', ExitCode.JOB_STOPPED, 'deployment_stopped'],
    ] as const) {
      let reads = 0
      server = await startServer(manager({status: () => (++reads < 2 ? 'STARTING' : status), jobs: () => []}))
      const error = await failure(waitUntilServing(client(), DEPLOYMENT.id, options))
      assert.equal(error.exitCode, exit, status)
      assert.equal(error.code, code)
      assert.ok(error.hint, 'with a hint')
      await server.close()
    }
    server = await startServer(manager({status: () => 'RUNNING', jobs: () => [running('A')]}))
    const late = await failure(waitUntilServing(client(), DEPLOYMENT.id, {timeoutMs: 30, pollMs: 5}))
    assert.equal(late.exitCode, ExitCode.TIMEOUT)
  })

  it('a revision rolled back is exit 8, though the old replicas RUNNING are as many as the replicas', async () => {
    let reads = 0
    const events = () => [
      event('REVISION_ACTIVATED', 'revision 2 active', 'T1'),
      ...(reads >= 3 ? [event('REVISION_ROLLED_BACK', 'revision 2 rolled back to 1: job C failed', 'T2')] : []),
    ]
    server = await startServer(
      manager({status: () => (reads++, 'RUNNING'), jobs: () => [running('A'), running('B')], events}),
    )
    const error = await failure(
      waitUntilServing(client(), DEPLOYMENT.id, {...options, revision: {revision: 2, after: 'T0'}}),
    )
    assert.equal(error.exitCode, ExitCode.JOB_FAILED)
    assert.equal(error.code, 'revision_rolled_back')
    assert.match(
      error.message,
      /revision 2 of deployment \S+ was rolled back: revision 2 rolled back to 1: job C failed/,
    )
  })

  it("a revision's rollout ends once its own jobs serve every replica, or its REVISION_ROLLED_OUT says so", async () => {
    let reads = 0
    server = await startServer(
      manager({
        status: () => (reads++, 'RUNNING'),
        jobs: () => (reads < 4 ? [running('A'), running('B'), running('C', 2)] : [running('C', 2), running('D', 2)]),
      }),
    )
    const serving = await waitUntilServing(client(), DEPLOYMENT.id, {...options, revision: {revision: 2}})
    assert.equal(serving.ready, 2)
    assert.ok(reads >= 4)
    await server.close()
    // A manager that names no job's revision: its event decides, not the old replicas' count.
    reads = 0
    server = await startServer(
      manager({
        status: () => (reads++, 'RUNNING'),
        jobs: () => [
          {job: 'A', state: 'RUNNING'},
          {job: 'B', state: 'RUNNING'},
        ],
        events: () => (reads >= 3 ? [event('REVISION_ROLLED_OUT', 'revision 2 serves every replica', 'T5')] : []),
      }),
    )
    await waitUntilServing(client(), DEPLOYMENT.id, {...options, revision: {revision: 2}})
    assert.ok(reads >= 3, `returned at read ${reads}, before the rollout`)
    // Events from before the revision are not its rollout's.
    assert.equal(await latestEventTime(client(), DEPLOYMENT.id), 'T5')
  })

  it('a manager that makes another revision active again is a rollback too', async () => {
    let reads = 0
    server = await startServer(
      manager({
        status: () => 'RUNNING',
        jobs: () => [running('A')],
        extra: () => ({active_revision: ++reads < 3 ? 2 : 1}),
      }),
    )
    const error = await failure(waitUntilServing(client(), DEPLOYMENT.id, {...options, revision: {revision: 2}}))
    assert.equal(error.code, 'revision_rolled_back')
    assert.match(error.message, /revision 1 is active again/)
  })
})
