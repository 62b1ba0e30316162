/**
 * `/metrics` of two managers on one PostgreSQL (issue 54): read from the database at scrape time, so whichever
 * manager is scraped answers the same, and a change made through one shows through the other at the next scrape.
 * Two real APIs on 127.0.0.1 over two stores of one schema; no chain (the vault balances are the localnet e2e's).
 */
import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {pgStores} from '../../helpers/deployment-stores-postgres.js'
import type {OpenedStore} from '../../helpers/deployment-stores.js'
import {parseMetrics} from '../../helpers/metrics.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'

const T0 = Date.now()

describe('deployment manager /metrics: two managers on one PostgreSQL answer the same', function () {
  this.timeout(30_000)
  let remove: () => Promise<void>
  let opened: OpenedStore
  const stores: DeploymentStore[] = []
  const apis: DeploymentApi[] = []

  before(async function () {
    if (pgStores.unavailable() && process.env.CI !== 'true') this.skip()
    let dir: string
    ;({dir, remove} = await tempDir())
    opened = await pgStores.open()
    stores.push(opened.store, await opened.reopen())
    for (const [i, store] of stores.entries()) {
      const auth = createApiAuth({rows: sqliteApiKeyRows(openSqlite(join(dir, `keys-${i}.db`)))})
      const ctx = {store, network: 'localnet', now: Date.now, log: () => undefined}
      const api = createDeploymentApi(ctx as unknown as ManagerContext, auth)
      await api.listen(0, '127.0.0.1')
      apis.push(api)
    }
  })
  after(async () => {
    for (const api of apis) await api.close()
    await opened?.cleanup()
    await remove?.()
  })

  const scrapes = async () =>
    Promise.all(
      apis.map(async (api) => {
        const response = await fetch(`${api.url}/metrics`)
        assert.equal(response.status, 200)
        return response.text()
      }),
    )

  it('the same text from both, moving together as one of them records a deployment, a listing and a failure', async () => {
    const [first, second] = await scrapes()
    assert.equal(first, second)
    const before = parseMetrics(first!)

    const owner = newWallet().address
    const vault = Keypair.generate().publicKey.toBase58()
    await stores[0]!.createDeployment(
      {
        id: 'd1',
        name: 'svc',
        owner,
        vault,
        market: 'market1',
        status: 'RUNNING',
        replicas: 1,
        timeout: 60,
        strategy: 'SIMPLE-EXTEND',
        time_scale: 1,
        confidential: false,
        active_revision: 1,
        started_at: T0,
        created_at: T0,
        updated_at: T0,
      },
      {deployment: 'd1', revision: 1, ipfs_definition_hash: 'Qm', job_definition: '{}', created_at: T0},
      {vault, owner, sealed: Buffer.alloc(93, 1), created_at: T0},
    )
    const extend = await stores[0]!.addTask(
      {deployment: 'd1', task: 'EXTEND', job: 'j1', limit: null, revision: 1, due_at: T0},
      T0,
    )
    await stores[0]!.updateTask(extend.id, {attempts: 1, error: 'the vault is short'}, T0)

    const [a, b] = await scrapes()
    assert.equal(a, b, 'the manager that did not record it answers the same')
    const after = parseMetrics(a!)
    const sample = 'deployment_manager_deployments{status="RUNNING",strategy="SIMPLE-EXTEND"}'
    assert.equal(after.get(sample), (before.get(sample) ?? 0) + 1)
    assert.equal(after.get('deployment_manager_task_failures{task="EXTEND"}'), 1)
    assert.equal(after.get('deployment_manager_tasks{task="EXTEND",status="PENDING"}'), 1)
    assert.equal(after.get('deployment_manager_vaults'), 1)
    assert.ok(!a!.includes(owner) && !a!.includes('svc'))
  })
})
