/**
 * The manager's routes under both spellings (issue 54): the network's manager of 2026 serves `/deployments/...`,
 * `@nosana/api` 2.1.8 sends `/api/deployments/...`. Over raw HTTP against the real API on a real SQLite store, a
 * table of every route: each is served under both, authenticated under both, and answers the same under both; the
 * client asks the other spelling only when a manager says the route is missing, and keeps it. `/metrics` from the
 * same store: Prometheus text with the store's figures and nothing secret. The chain's answers are the e2e tests'
 * (routes.e2e.test.ts).
 */
import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'
import type Database from 'better-sqlite3'

import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {type ApiAuth, createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import {DeploymentClient, isMissingRoute} from '../../../src/lib/deployments/client/client.js'
import {duplicateBody} from '../../../src/lib/deployments/client/client-duplicate.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {copyName, parseDuplicateBody} from '../../../src/lib/deployments/manager/validation.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import {openSqliteDeploymentStore} from '../../../src/lib/deployments/store/sqlite-store.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {closeHttpAgents, configureHttp} from '../../../src/lib/http/client.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {startServer, type TestServer} from '../../helpers/http.js'
import {parseMetrics} from '../../helpers/metrics.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'

const ID = '8mjoSLcTSGfmxBANjB1dQ8Wv7ZGJdoVbMUVF6GUFXVhu'
const JOB = Keypair.generate().publicKey.toBase58()
const NOW = Date.now()
/** The network's of 2026 and @nosana/api 2.1.8's, as this test knows them (not the API's own list). */
const SPELLINGS = ['', '/api']

/**
 * Every route of the deployments API and of gpunet's API keys, as served under a prefix (`:id` the deployment,
 * `:job` its job, `:vault` its vault). A route added to the API and not here fails the first test.
 */
const ROUTES = [
  'GET /deployments',
  'POST /deployments/create',
  'GET /deployments/vaults',
  'POST /deployments/vaults/create',
  'POST /deployments/vaults/:vault/withdraw',
  'GET /deployments/:id',
  'DELETE /deployments/:id',
  'GET /deployments/:id/jobs',
  'GET /deployments/:id/jobs/:job',
  'GET /deployments/:id/events',
  'GET /deployments/:id/tasks',
  'GET /deployments/:id/revisions',
  'GET /deployments/:id/vault',
  'GET /deployments/:id/header',
  'POST /deployments/:id/create-revision',
  'POST /deployments/:id/duplicate',
  'POST /deployments/:id/start',
  'POST /deployments/:id/stop',
  'POST /deployments/:id/archive',
  'PATCH /deployments/:id/update-active-revision',
  'PATCH /deployments/:id/update-market',
  'PATCH /deployments/:id/update-replica-count',
  'PATCH /deployments/:id/update-schedule',
  'PATCH /deployments/:id/update-timeout',
  'PATCH /deployments/:id/update-autoscale',
  'GET /deployments/:id/autoscale',
  'POST /api-keys',
  'GET /api-keys',
  'DELETE /api-keys/:id',
]

/** The routes that read only the store: their answers are compared whole between the spellings. */
const READS = [
  'GET /deployments',
  'GET /deployments/vaults',
  'GET /deployments/:id',
  'GET /deployments/:id/jobs',
  'GET /deployments/:id/events',
  'GET /deployments/:id/tasks',
  'GET /deployments/:id/revisions',
  'GET /api-keys',
]

describe('deployment manager routes: both spellings, /metrics', function () {
  this.timeout(30_000)
  let remove: () => Promise<void>
  let store: DeploymentStore
  let keysDb: Database.Database
  let auth: ApiAuth
  let api: DeploymentApi
  const owner = newWallet()
  const vault = Keypair.generate()

  before(async () => {
    let dir: string
    ;({dir, remove} = await tempDir())
    store = openSqliteDeploymentStore(join(dir, 'deployments.db'))
    const seal = vaultSeal(Buffer.alloc(32, 7))
    const address = vault.publicKey.toBase58()
    await store.createDeployment(
      {
        id: ID,
        name: 'svc',
        owner: owner.address,
        vault: address,
        market: JOB,
        status: 'RUNNING',
        replicas: 1,
        timeout: 60,
        strategy: 'SIMPLE-EXTEND',
        time_scale: 1,
        confidential: false,
        active_revision: 1,
        started_at: NOW,
        created_at: NOW,
        updated_at: NOW,
      },
      {deployment: ID, revision: 1, ipfs_definition_hash: 'Qm', job_definition: '{}', created_at: NOW},
      {vault: address, owner: owner.address, sealed: seal.seal(vault), created_at: NOW},
    )
    const list = await store.addTask({deployment: ID, task: 'LIST', job: null, limit: 1, revision: 1, due_at: NOW}, NOW)
    await store.recordListed(
      list,
      {
        job: JOB,
        deployment: ID,
        tx: 'tx',
        market: JOB,
        revision: 1,
        run: JOB,
        state: 'RUNNING',
        time_start: 1,
        chain_timeout: 3600,
        time_end: 0,
        stop_requested: false,
        created_at: NOW,
        updated_at: NOW,
      },
      'tx',
      NOW,
    )
    const extend = await store.addTask(
      {deployment: ID, task: 'EXTEND', job: JOB, limit: null, revision: 1, due_at: NOW},
      NOW,
    )
    await store.updateTask(extend.id, {attempts: 2, error: 'the vault is short'}, NOW)
    keysDb = openSqlite(join(dir, 'keys.db'))
    auth = createApiAuth({rows: sqliteApiKeyRows(keysDb)})
    // No chain (the routes that read it are the e2e tests'), nor a gateway: the endpoints are the network's.
    const net = {networkHost: 'node.example', gatewayUrl: null}
    const ctx = {
      net,
      store,
      seal,
      network: 'localnet',
      now: () => Date.now(),
      log: () => undefined,
    } as unknown as ManagerContext
    api = createDeploymentApi(ctx, auth)
    await api.listen(0, '127.0.0.1')
  })
  after(async () => {
    await api.close()
    await store.close()
    keysDb.close()
    await remove()
  })

  const path = (route: string, prefix: string) =>
    `${prefix}${route.split(' ')[1]!}`
      .replace(':id', ID)
      .replace(':job', JOB)
      .replace(':vault', vault.publicKey.toBase58())
  async function send(route: string, prefix: string, headers: Record<string, string> = {}) {
    const method = route.split(' ')[0]!
    const response = await fetch(`${api.url}${path(route, prefix)}`, {method, headers})
    const text = await response.text()
    return {status: response.status, body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>)}
  }

  it('serves every route of the table under both spellings, and no other', () => {
    const served = api.routes.filter((r) => !['GET /health', 'GET /metrics'].includes(r))
    const expected = SPELLINGS.flatMap((prefix) => ROUTES.map((route) => route.replace(' /', ` ${prefix}/`)))
    assert.deepEqual([...served].sort(), [...expected].sort())
  })

  for (const route of ROUTES) {
    it(`${route}: authenticated under both spellings (401 without credentials, not a missing route)`, async () => {
      for (const prefix of SPELLINGS) {
        const {status, body} = await send(route, prefix)
        assert.equal(status, 401, `${prefix}${route}: ${JSON.stringify(body)}`)
      }
    })
  }

  for (const route of READS) {
    it(`${route}: the same answer under both spellings`, async () => {
      const [bare, api] = await Promise.all(SPELLINGS.map((p) => send(route, p, apiAuthHeaders(owner))))
      assert.equal(bare!.status, 200, JSON.stringify(bare!.body))
      assert.deepEqual(bare, api)
    })
  }

  it("another owner's deployment is 404 under both spellings; a path of neither is no_route", async () => {
    const stranger = apiAuthHeaders(newWallet())
    for (const prefix of SPELLINGS) {
      const {status, body} = await send('GET /deployments/:id', prefix, stranger)
      assert.equal(status, 404)
      assert.equal((body!.error as {code: string}).code, 'not_found')
      const dup = await send('POST /deployments/:id/duplicate', prefix, stranger)
      assert.equal(dup.status, 404)
    }
    const missing = await send('GET /v1/deployments', '', apiAuthHeaders(owner))
    assert.equal(missing.status, 404)
    assert.equal((missing.body!.error as {code: string}).code, 'no_route')
  })

  it('/metrics: Prometheus text of the store, without credentials, and nothing secret in it', async () => {
    const {key} = await auth.apiKeys.create(owner.address, 'scrape')
    const header = apiAuthHeaders(owner).authorization
    const response = await fetch(`${api.url}/metrics`)
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/)
    const metrics = parseMetrics(await response.text())
    assert.equal(metrics.get('deployment_manager_deployments{status="RUNNING",strategy="SIMPLE-EXTEND"}'), 1)
    assert.equal(metrics.get('deployment_manager_deployments{status="DRAFT",strategy="SIMPLE"}'), 0)
    assert.equal(metrics.get('deployment_manager_tasks{task="LIST",status="DONE"}'), 1)
    assert.equal(metrics.get('deployment_manager_tasks{task="EXTEND",status="PENDING"}'), 1)
    assert.equal(metrics.get('deployment_manager_task_failures{task="EXTEND"}'), 2)
    assert.equal(metrics.get('deployment_manager_task_failures{task="LIST"}'), 0)
    assert.equal(metrics.get('deployment_manager_jobs{state="RUNNING"}'), 1)
    assert.equal(metrics.get('deployment_manager_vaults'), 1)
    // No chain here: the balances are said to be unread rather than shown as 0.
    assert.equal(metrics.get('deployment_manager_vault_balances_read'), 0)
    const text = await (await fetch(`${api.url}/metrics`)).text()
    for (const secret of [key, header.split(':')[1]!, owner.address, ID, 'svc', JSON.stringify([...vault.secretKey])])
      assert.ok(!text.includes(secret), `/metrics holds ${secret.slice(0, 12)}…`)
  })

  describe('the client: /api first, the bare spelling once a manager says the route is missing, kept for it', () => {
    let server: TestServer | undefined
    before(() => configureHttp({retry: {maxRetries: 0}}))
    after(() => configureHttp())
    afterEach(async () => {
      await server?.close()
      server = undefined
      await closeHttpAgents()
    })
    const deployment = {
      id: ID,
      name: 'svc',
      vault: vault.publicKey.toBase58(),
      market: JOB,
      owner: owner.address,
      status: 'RUNNING',
      replicas: 1,
      timeout: 60,
      strategy: 'SIMPLE',
      created_at: new Date(NOW).toISOString(),
      updated_at: new Date(NOW).toISOString(),
    }
    const client = (url: string) => new DeploymentClient(url, () => apiAuthHeaders(owner))

    it("a manager of 2026 (no /api; fastify's own 404 for a missing route): asked again without /api, then only so", async () => {
      server = await startServer((req, res) => {
        res.setHeader('content-type', 'application/json')
        if (req.url === `/deployments/${ID}`) return res.end(JSON.stringify(deployment))
        if (req.url === `/deployments/${ID}/duplicate`) return res.end(JSON.stringify({...deployment, id: JOB}))
        res.statusCode = 404
        res.end(
          JSON.stringify({message: `Route ${req.method}:${req.url} not found`, error: 'Not Found', statusCode: 404}),
        )
      })
      const c = client(server.url)
      assert.equal((await c.get(ID)).id, ID)
      assert.equal((await c.get(ID)).id, ID)
      assert.equal((await c.duplicate(ID, {name: 'x'})).id, JOB)
      assert.deepEqual(server.seen, [
        `GET /api/deployments/${ID}`,
        `GET /deployments/${ID}`,
        `GET /deployments/${ID}`,
        `POST /deployments/${ID}/duplicate`,
      ])
    })

    it("a manager with /api (gpunet's, the network's before 2026): one request each; a deployment's own 404 is not asked again", async () => {
      server = await startServer((req, res) => {
        res.setHeader('content-type', 'application/json')
        if (req.url === `/api/deployments/${ID}`) return res.end(JSON.stringify(deployment))
        res.statusCode = 404
        res.end(JSON.stringify({error: {code: 'not_found', message: 'no deployment'}}))
      })
      const c = client(server.url)
      assert.equal((await c.get(ID)).id, ID)
      const refused = await c.get(JOB).then(
        () => assert.fail('found'),
        (error: unknown) => error as GpunetError,
      )
      assert.equal(refused.exitCode, ExitCode.NOT_FOUND)
      assert.deepEqual(server.seen, [`GET /api/deployments/${ID}`, `GET /api/deployments/${JOB}`])
    })

    it('against the real API: /api answers, nothing is asked twice', async () => {
      const c = new DeploymentClient(api.url, () => apiAuthHeaders(owner))
      assert.equal((await c.get(ID)).name, 'svc')
      assert.equal((await c.jobs(ID)).jobs[0]!.job, JOB)
    })

    it('isMissingRoute: only a 404 that names no deployment', () => {
      assert.equal(isMissingRoute({status: 404, text: '{"error":{"code":"no_route","message":"no route"}}'}), true)
      assert.equal(
        isMissingRoute({status: 404, text: '{"message":"Route GET:/api/x not found","statusCode":404}'}),
        true,
      )
      assert.equal(isMissingRoute({status: 404, text: '<html>Not Found</html>'}), true)
      assert.equal(isMissingRoute({status: 404, text: '{"error":"Deployment not found"}'}), false)
      assert.equal(
        isMissingRoute({status: 404, text: '{"error":{"code":"not_found","message":"no deployment"}}'}),
        false,
      )
      assert.equal(isMissingRoute({status: 401, text: '<html>'}), false)
    })
  })

  describe('duplicate bodies', () => {
    it('the manager takes none or {name?, market?, autostart?}, and refuses anything else (400)', () => {
      assert.deepEqual(parseDuplicateBody(undefined), {name: undefined, market: undefined, autostart: false})
      assert.deepEqual(parseDuplicateBody({name: 'b', market: JOB, autostart: true}), {
        name: 'b',
        market: JOB,
        autostart: true,
      })
      for (const bad of [
        [],
        'x',
        {name: ''},
        {name: 'x'.repeat(101)},
        {name: 'a\nb'},
        {market: 'nope'},
        {autostart: 'yes'},
      ])
        assert.throws(
          () => parseDuplicateBody(bad),
          (e: {status?: number}) => e.status === 400,
          JSON.stringify(bad),
        )
    })

    it('a copy is named "<name> (copy)" within the 100 characters', () => {
      assert.equal(copyName('llm'), 'llm (copy)')
      assert.equal(copyName('x'.repeat(100)).length, 100)
      assert.match(copyName('x'.repeat(100)), /x \(copy\)$/)
    })

    it('the command sends only the flags given, and refuses a bad --name or --market before sending (exit 2)', () => {
      assert.deepEqual(duplicateBody({}), {})
      assert.deepEqual(duplicateBody({name: 'b', market: JOB, start: true}), {name: 'b', market: JOB, autostart: true})
      for (const bad of [{name: ''}, {name: 'x'.repeat(101)}, {market: 'not-an-address'}])
        assert.throws(
          () => duplicateBody(bad),
          (e: GpunetError) => e.exitCode === ExitCode.USAGE,
        )
    })
  })
})
