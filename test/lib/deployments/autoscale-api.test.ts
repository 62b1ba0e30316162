/**
 * gpunet's autoscaling routes over real HTTP against the real API on a real SQLite store: every bad policy of
 * issue 57's item 5 is 400 with nothing changed, a good one is stored (the replicas brought within its bounds) and
 * recorded as an event, and a replica count set by hand ends it. The budget's check against a listing's deposit
 * reads the market on chain: the e2e tests' (autoscale.e2e.test.ts).
 */
import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import {DeploymentClient} from '../../../src/lib/deployments/client/client.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {parseCreateBody} from '../../../src/lib/deployments/manager/validation.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import {openSqliteDeploymentStore} from '../../../src/lib/deployments/store/sqlite-store.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import type {Strategy} from '../../../src/lib/deployments/types.js'
import {ExitCode, isGpunetError} from '../../../src/lib/errors.js'
import {ApiError} from '../../../src/lib/http/api-error.js'
import {closeHttpAgents} from '../../../src/lib/http/client.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'

const NOW = Date.now()
const GOOD = {min_replicas: 0, max_replicas: 3, target_concurrency: 2, scale_down_after: 60}

describe('autoscaling routes: update-autoscale, bad inputs, scale ends a policy', () => {
  let remove: () => Promise<void>
  let store: DeploymentStore
  let api: DeploymentApi
  let client: DeploymentClient
  let closeKeys: () => void
  const owner = newWallet()
  const ids: Record<string, string> = {}

  before(async () => {
    let dir: string
    ;({dir, remove} = await tempDir())
    store = openSqliteDeploymentStore(join(dir, 'deployments.db'))
    const seal = vaultSeal(Buffer.alloc(32, 7))
    const vault = Keypair.generate()
    const address = vault.publicKey.toBase58()
    let first = true
    for (const strategy of ['SIMPLE-EXTEND', 'INFINITE', 'SIMPLE', 'SCHEDULED'] as Strategy[]) {
      const id = Keypair.generate().publicKey.toBase58()
      ids[strategy] = id
      await store.createDeployment(
        {
          id,
          name: strategy,
          owner: owner.address,
          vault: address,
          market: address,
          status: 'RUNNING',
          replicas: 5,
          timeout: 60,
          strategy,
          time_scale: 1,
          confidential: false,
          active_revision: 1,
          started_at: NOW,
          schedule: strategy === 'SCHEDULED' ? '0 3 * * *' : null,
          created_at: NOW,
          updated_at: NOW,
        },
        {deployment: id, revision: 1, ipfs_definition_hash: 'Qm', job_definition: '{}', created_at: NOW},
        first ? {vault: address, owner: owner.address, sealed: seal.seal(vault), created_at: NOW} : null,
      )
      first = false
    }
    const keysDb = openSqlite(join(dir, 'keys.db'))
    closeKeys = () => keysDb.close()
    const ctx = {
      net: {networkHost: 'node.example', gatewayUrl: null},
      store,
      seal,
      network: 'localnet',
      now: () => Date.now(),
      log: () => undefined,
    } as unknown as ManagerContext
    api = createDeploymentApi(ctx, createApiAuth({rows: sqliteApiKeyRows(keysDb)}))
    await api.listen(0, '127.0.0.1')
    client = new DeploymentClient(api.url, () => ({...apiAuthHeaders(owner)}))
  })
  after(async () => {
    await api.close()
    await store.close()
    closeKeys()
    await closeHttpAgents()
    await remove()
  })

  /** The 400's code, with the row (and its events) as they were before. */
  const refused = async (id: string, body: Record<string, unknown>): Promise<string> => {
    const before = await store.deployment(id)
    const events = (await store.events(id)).length
    const error = await client.updateAutoscale(id, body as never).then(
      () => assert.fail('taken'),
      (e: unknown) => e,
    )
    assert.ok(isGpunetError(error))
    assert.equal(error.fields.status, 400)
    assert.equal(error.exitCode, ExitCode.INVALID_INPUT)
    assert.deepEqual(await store.deployment(id), before, 'nothing changed')
    assert.equal((await store.events(id)).length, events)
    return error.code
  }

  it('refuses each bad policy with 400 and its code, nothing changed', async () => {
    const id = ids['SIMPLE-EXTEND']!
    const bad = (change: Record<string, unknown>) => refused(id, {autoscale: {...GOOD, ...change}})
    assert.equal(await bad({min_replicas: 4, max_replicas: 3}), 'min_above_max')
    assert.equal(await bad({max_replicas: 101}), 'invalid_max_replicas')
    assert.equal(await bad({max_replicas: 0}), 'invalid_max_replicas')
    assert.equal(await bad({target_concurrency: 0}), 'invalid_target_concurrency')
    assert.equal(await bad({target_concurrency: -1}), 'invalid_target_concurrency')
    assert.equal(await bad({target_concurrency: 'two'}), 'invalid_target_concurrency')
    assert.equal(await bad({scale_down_after: 9}), 'invalid_scale_down_after')
    assert.equal(await bad({min_replicas: -1}), 'invalid_min_replicas')
    assert.equal(await refused(id, {budget: 0}), 'invalid_budget')
    assert.equal(await refused(id, {budget: 1.0000001}), 'invalid_budget')
    assert.equal(await refused(id, {}), 'invalid_body')
  })

  it('refuses a policy on SIMPLE and on SCHEDULED', async () => {
    assert.equal(await refused(ids.SIMPLE!, {autoscale: GOOD}), 'policy_strategy')
    assert.equal(await refused(ids.SCHEDULED!, {autoscale: GOOD}), 'policy_strategy')
  })

  it("refuses a create's bad policy (400) before anything is read or stored", () => {
    const body = {name: 'svc', strategy: 'SIMPLE', timeout: 60, replicas: 1, job_definition: {ops: []}}
    assert.throws(
      () => parseCreateBody({...body, autoscale: GOOD}, 'localnet'),
      (e: unknown) => e instanceof ApiError && e.status === 400 && e.code === 'policy_strategy',
    )
    assert.throws(
      () => parseCreateBody({...body, strategy: 'INFINITE', autoscale: {...GOOD, min_replicas: 5}}, 'localnet'),
      (e: unknown) => e instanceof ApiError && e.code === 'min_above_max',
    )
    const parsed = parseCreateBody(
      {...body, strategy: 'SIMPLE-EXTEND', autoscale: {...GOOD, scale_down_after: undefined}},
      'localnet',
    )
    assert.deepEqual(parsed.autoscale, {...GOOD, scale_down_after: 300})
  })

  it('stores a good policy on SIMPLE-EXTEND and INFINITE, the replicas within its bounds, with an event', async () => {
    for (const strategy of ['SIMPLE-EXTEND', 'INFINITE']) {
      const answer = await client.updateAutoscale(ids[strategy]!, {autoscale: GOOD})
      assert.deepEqual(answer.autoscale, GOOD)
      // 5 replicas, at most 3.
      assert.equal(answer.replicas, 3)
      const row = await store.deployment(ids[strategy]!)
      assert.deepEqual(
        [row?.min_replicas, row?.max_replicas, row?.target_concurrency, row?.scale_down_after],
        [0, 3, 2, 60],
      )
      const events = await store.events(ids[strategy]!)
      assert.equal(events.at(-1)?.type, 'AUTOSCALE_ON')
    }
  })

  it('a count set by hand ends the policy, with an event; update-autoscale null ends it too', async () => {
    const id = ids['SIMPLE-EXTEND']!
    const scaled = await client.scale(id, 2)
    assert.equal(scaled.replicas, 2)
    assert.equal((await client.get(id)).autoscale, undefined)
    assert.equal((await store.deployment(id))?.max_replicas, null)
    assert.equal((await store.events(id)).at(-1)?.type, 'AUTOSCALE_OFF')
    const other = ids.INFINITE!
    const off = await client.updateAutoscale(other, {autoscale: null})
    assert.equal(off.autoscale, undefined)
    assert.equal(off.replicas, 3)
  })
})
