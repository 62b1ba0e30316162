/** The deployment store opened on a file made before INFINITE's columns: they are added in place, rows kept. */
import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import {openSqliteDeploymentStore} from '../../../src/lib/deployments/store/sqlite-store.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'

describe('deployment store: columns added after the first release', () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir('gpunet-store-')
  })
  afterEach(() => removeDir(dir))

  it('a store without schedule, rotation_time, startup_timeout, throttle_rounds, time_end, the autoscaling columns and chain_price gets them, its rows kept', async () => {
    const file = join(dir, 'deployments.db')
    const old = openSqlite(file)
    old.exec(`CREATE TABLE deployments (id TEXT PRIMARY KEY, name TEXT NOT NULL, owner TEXT NOT NULL, vault TEXT NOT NULL,
      market TEXT NOT NULL, status TEXT NOT NULL, replicas INTEGER NOT NULL, timeout INTEGER NOT NULL,
      strategy TEXT NOT NULL, time_scale REAL NOT NULL, confidential INTEGER NOT NULL, active_revision INTEGER NOT NULL,
      started_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE TABLE jobs (job TEXT PRIMARY KEY, deployment TEXT NOT NULL, tx TEXT NOT NULL, market TEXT NOT NULL,
      revision INTEGER NOT NULL, run TEXT NOT NULL, state TEXT NOT NULL, time_start INTEGER NOT NULL,
      chain_timeout INTEGER NOT NULL, stop_requested INTEGER NOT NULL, created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL);
      INSERT INTO deployments VALUES ('d1', 'svc', 'o', 'v', 'm', 'RUNNING', 2, 10, 'SIMPLE', 1, 0, 1, 5, 1, 2);
      INSERT INTO jobs VALUES ('j1', 'd1', 'tx', 'm', 1, 'r', 'RUNNING', 100, 600, 0, 1, 2);`)
    old.close()
    const store = openSqliteDeploymentStore(file)
    try {
      const row = await store.deployment('d1')
      assert.equal(row?.name, 'svc')
      assert.deepEqual(
        [row?.schedule, row?.rotation_time, row?.startup_timeout, row?.throttle_rounds],
        [null, null, null, 0],
      )
      assert.equal((await store.job('j1'))?.time_end, 0)
      // Draining through the store: an old job was never marked, and can be.
      assert.equal((await store.job('j1'))?.draining_at, null)
      assert.equal(await store.markDraining('j1', 7), 7)
      // A job stored before its price was recorded has none: budget.ts counts it at the market's price.
      assert.equal((await store.job('j1'))?.chain_price, null)
      // Autoscaling's columns: none set on an old row, so it has no policy and no budget.
      assert.deepEqual(
        [row?.min_replicas, row?.max_replicas, row?.target_concurrency, row?.scale_down_after, row?.budget],
        [null, null, null, null, null],
      )
      await store.updateDeployment(
        'd1',
        {min_replicas: 0, max_replicas: 3, target_concurrency: 2.5, budget: 7_000_000},
        3,
      )
      assert.deepEqual(
        [(await store.deployment('d1'))?.max_replicas, (await store.deployment('d1'))?.target_concurrency],
        [3, 2.5],
      )
      await store.updateDeployment('d1', {throttle_rounds: 3, rotation_time: 900}, 3)
      await store.updateJob('j1', {time_end: 160, chain_price: '12'}, 3)
      assert.equal((await store.deployment('d1'))?.throttle_rounds, 3)
      assert.equal((await store.job('j1'))?.time_end, 160)
    } finally {
      await store.close()
    }
    // Opened again: nothing added twice.
    const again = openSqliteDeploymentStore(file)
    assert.equal((await again.deployment('d1'))?.rotation_time, 900)
    assert.equal((await again.deployment('d1'))?.budget, 7_000_000)
    assert.equal((await again.job('j1'))?.draining_at, 7)
    assert.equal((await again.job('j1'))?.chain_price, '12')
    await again.close()
  })
})
