/**
 * Requests on one deployment that race a delete (issue 61): whichever lands first, each is answered as it would be
 * one after the other (404 once the deployment is gone), never 500. Real API on 127.0.0.1 over a real PostgreSQL
 * store (its queries interleave, as several requests' do on a manager), real wallet headers.
 */
import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {pgStores} from '../../helpers/deployment-stores-postgres.js'
import type {OpenedStore} from '../../helpers/deployment-stores.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'

describe('deployment API: requests racing a delete', function () {
  this.timeout(30_000)
  let remove: () => Promise<void>
  let opened: OpenedStore
  let store: DeploymentStore
  let api: DeploymentApi
  const logged: string[] = []
  const owner = newWallet()

  before(async function () {
    if (pgStores.unavailable() && process.env.CI !== 'true') this.skip()
    let dir: string
    ;({dir, remove} = await tempDir())
    opened = await pgStores.open()
    store = opened.store
    const auth = createApiAuth({rows: sqliteApiKeyRows(openSqlite(join(dir, 'keys.db')))})
    const ctx = {store, network: 'localnet', now: Date.now, log: (line: string) => logged.push(line)}
    api = createDeploymentApi(ctx as unknown as ManagerContext, auth)
    await api.listen(0, '127.0.0.1')
  })
  after(async () => {
    await api?.close()
    await opened?.cleanup()
    await remove?.()
  })

  /** A DRAFT deployment of the owner's, straight into the store. */
  async function draft(): Promise<string> {
    const id = Keypair.generate().publicKey.toBase58()
    const vault = Keypair.generate().publicKey.toBase58()
    const now = Date.now()
    await store.createDeployment(
      {
        id,
        name: 'svc',
        owner: owner.address,
        vault,
        market: vault,
        status: 'DRAFT',
        replicas: 1,
        timeout: 10,
        strategy: 'SIMPLE',
        time_scale: 1,
        confidential: false,
        active_revision: 1,
        started_at: null,
        created_at: now,
        updated_at: now,
      },
      {deployment: id, revision: 1, ipfs_definition_hash: 'Qm', job_definition: '{}', created_at: now},
      {vault, owner: owner.address, sealed: Buffer.alloc(1), created_at: now},
    )
    return id
  }

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: {...apiAuthHeaders(owner), ...(body ? {'content-type': 'application/json'} : {})},
      ...(body ? {body: JSON.stringify(body)} : {}),
    })
    const text = await response.text()
    return {status: response.status, body: text}
  }

  it('answers archive, replica and timeout changes sent with a delete 200 or 404, never 500', async () => {
    const answers: {what: string; status: number; body: string}[] = []
    for (let round = 0; round < 20; round++) {
      const id = await draft()
      const sent = [
        ['delete', call('DELETE', `/api/deployments/${id}`)],
        ['archive', call('POST', `/api/deployments/${id}/archive`)],
        ['replicas', call('PATCH', `/api/deployments/${id}/update-replica-count`, {replicas: 2})],
        ['timeout', call('PATCH', `/api/deployments/${id}/update-timeout`, {timeout: 20})],
      ] as const
      for (const [what, answer] of sent) answers.push({what, ...(await answer)})
    }
    const failed = answers.filter((a) => ![200, 204, 404, 409].includes(a.status))
    assert.deepEqual(failed, [])
    assert.deepEqual(logged, [])
  })
})
