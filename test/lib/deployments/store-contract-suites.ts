/**
 * The deployment store's contract: one suite, run on the SQLite store (store-contract.test.ts) and on the PostgreSQL
 * store (a fresh schema of the test database per test, store-contract-postgres.e2e.test.ts), so the two answer alike.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {createApiKeys} from '../../../src/lib/deployments/store/api-keys.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import type {DeploymentRow, RevisionRow, VaultRow} from '../../../src/lib/deployments/types.js'
import {loadCheckedVaultKey} from '../../../src/lib/deployments/paying/vault-key-check.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import {isGpunetError} from '../../../src/lib/errors.js'
import {forEachStore, type OpenedStore, type StoreAdapter} from '../../helpers/deployment-stores.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'

const T0 = 1_800_000_000_000

/** A deployment's rows as created: the deployment, its first revision and its vault (other suites use them too). */
export function rows(id: string, owner: string, at: number, extra: Partial<DeploymentRow> = {}) {
  const vault = Keypair.generate()
  const deployment: DeploymentRow = {
    id,
    name: `service ${id}`,
    owner,
    vault: vault.publicKey.toBase58(),
    market: 'market1',
    status: 'DRAFT',
    replicas: 2,
    timeout: 60,
    strategy: 'SIMPLE',
    time_scale: 1.5,
    confidential: false,
    active_revision: 1,
    started_at: null,
    schedule: null,
    rotation_time: null,
    startup_timeout: null,
    throttle_rounds: 0,
    move_from: null,
    move_began: null,
    queue_placement: null,
    min_replicas: null,
    max_replicas: null,
    target_concurrency: null,
    scale_down_after: null,
    calm_since: null,
    budget: null,
    created_at: at,
    updated_at: at,
    ...extra,
  }
  const revision: RevisionRow = {
    deployment: id,
    revision: 1,
    ipfs_definition_hash: 'Qm' + id,
    job_definition: '{"version":"0.1"}',
    created_at: at,
  }
  const sealed: VaultRow = {vault: deployment.vault, owner, sealed: randomBytes(93), created_at: at}
  return {deployment, revision, vault: sealed, keypair: vault}
}

/** The contract's suites on each of `adapters`: SQLite in store-contract.test.ts, PostgreSQL in store-contract-postgres.e2e.test.ts. */
export function storeContractSuites(adapters: StoreAdapter[]): void {
  forEachStore(
    'deployment store contract',
    (adapter) => {
      let opened: OpenedStore
      let store: DeploymentStore
      beforeEach(async () => {
        opened = await adapter.open()
        store = opened.store
      })
      afterEach(async () => opened.cleanup())

      it('keeps deployments, revisions and vaults as given, and filters and pages the owner list', async () => {
        const owner = newWallet().address
        const made = [0, 1, 2].map((i) =>
          rows(`d${i}`, owner, T0 + i * 1000, i === 2 ? {strategy: 'SIMPLE-EXTEND'} : {}),
        )
        for (const r of made) await store.createDeployment(r.deployment, r.revision, r.vault)
        await store.createDeployment(
          ...(Object.values(rows('other', newWallet().address, T0 + 5)).slice(0, 3) as [
            DeploymentRow,
            RevisionRow,
            VaultRow,
          ]),
        )

        assert.deepEqual(await store.deployment('d1'), made[1]!.deployment)
        assert.equal(await store.deployment('nope'), undefined)
        assert.deepEqual(await store.revisions('d1'), [made[1]!.revision])
        assert.deepEqual(await store.revision('d1', 1), made[1]!.revision)
        const vault = await store.vault(made[0]!.vault.vault)
        assert.deepEqual({...vault!, sealed: Buffer.from(vault!.sealed)}, made[0]!.vault)
        assert.deepEqual(
          (await store.vaults(owner)).map((v) => v.vault),
          made.map((r) => r.vault.vault),
        )

        const page = (q: Partial<Parameters<DeploymentStore['deployments']>[0]>) =>
          store.deployments({owner, offset: 0, limit: 10, order: 'desc', ...q})
        const all = await page({})
        assert.equal(all.total, 3)
        assert.deepEqual(
          all.rows.map((d) => d.id),
          ['d2', 'd1', 'd0'],
        )
        const second = await page({order: 'asc', offset: 1, limit: 1})
        assert.deepEqual([second.rows.map((d) => d.id), second.total], [['d1'], 3])
        assert.deepEqual(
          (await page({strategies: ['SIMPLE-EXTEND']})).rows.map((d) => d.id),
          ['d2'],
        )
        assert.deepEqual(
          (await page({search: 'CE D1'})).rows.map((d) => d.id),
          ['d1'],
        )
        assert.deepEqual(
          (await page({search: 'd0'})).rows.map((d) => d.id),
          ['d0'],
        )
        assert.deepEqual(
          (await page({createdAfter: T0, createdBefore: T0 + 2000})).rows.map((d) => d.id),
          ['d1'],
        )
        assert.deepEqual(
          (await page({vault: made[0]!.vault.vault})).rows.map((d) => d.id),
          ['d0'],
        )
        assert.equal((await page({statuses: ['RUNNING', 'STOPPED']})).total, 0)

        const changed = await store.updateDeployment(
          'd0',
          {status: 'RUNNING', confidential: true, started_at: T0 + 5},
          T0 + 9,
        )
        assert.deepEqual(changed, {
          ...made[0]!.deployment,
          status: 'RUNNING',
          confidential: true,
          started_at: T0 + 5,
          updated_at: T0 + 9,
        })
        assert.deepEqual(
          (await store.deploymentsIn(['RUNNING', 'STARTING'])).map((d) => d.id),
          ['d0'],
        )
        assert.deepEqual(
          (await page({statuses: ['RUNNING', 'STOPPED']})).rows.map((d) => d.id),
          ['d0'],
        )
        assert.equal((await store.anyVault())?.vault, made[0]!.vault.vault)
      })

      it('moves a deployment only from the statuses given (of 20 moves at once, one), and changes no deployment that is gone', async () => {
        const r = rows('d', newWallet().address, T0, {status: 'DRAFT'})
        await store.createDeployment(r.deployment, r.revision, r.vault)
        const moves = await Promise.all(
          Array.from({length: 20}, (_, i) =>
            store.moveDeployment('d', ['DRAFT', 'STOPPED'], {status: 'STARTING', started_at: T0 + i}, T0 + 1),
          ),
        )
        const moved = moves.filter((m) => m !== undefined)
        assert.equal(moved.length, 1)
        assert.equal(moved[0]!.status, 'STARTING')
        assert.deepEqual(await store.deployment('d'), moved[0])
        assert.equal(await store.moveDeployment('d', ['DRAFT'], {status: 'STOPPED'}, T0 + 2), undefined)
        assert.equal((await store.deployment('d'))!.status, 'STARTING')
        assert.equal(await store.moveDeployment('gone', ['DRAFT'], {status: 'STARTING'}, T0 + 2), undefined)
        await assert.rejects(store.updateDeployment('gone', {replicas: 2}, T0 + 2), {code: 'not_found'})
        const back = await store.moveDeployment('d', ['STARTING'], {status: 'STOPPED'}, T0 + 3)
        assert.deepEqual([back?.status, back?.updated_at], ['STOPPED', T0 + 3])
      })

      it('keeps jobs, tasks (in flight, due, listed) and events, and deletes a deployment with them', async () => {
        const owner = newWallet().address
        const r = rows('d', owner, T0)
        await store.createDeployment(r.deployment, r.revision, r.vault)
        const list = await store.addTask(
          {deployment: 'd', task: 'LIST', job: null, limit: 2, revision: 1, due_at: T0},
          T0,
        )
        assert.deepEqual(
          {...list, id: 0},
          {
            id: 0,
            deployment: 'd',
            task: 'LIST',
            status: 'PENDING',
            job: null,
            limit: 2,
            revision: 1,
            attempts: 0,
            due_at: T0,
            in_flight: null,
            tx: null,
            error: null,
            created_at: T0,
            updated_at: T0,
          },
        )
        const later = await store.addTask(
          {deployment: 'd', task: 'EXTEND', job: 'j0', limit: null, revision: 1, due_at: T0 + 100},
          T0,
        )
        assert.ok(later.id > list.id)
        assert.deepEqual(
          (await store.dueTasks(T0 + 50)).map((t) => t.id),
          [list.id],
        )
        await store.saveInFlight(
          later.id,
          {raw: 'AA==', signature: 's1', lastValidBlockHeight: 9, timeoutBefore: 5},
          T0 + 1,
        )
        // PROCESSING first, then by due time.
        assert.deepEqual(
          (await store.dueTasks(T0 + 100)).map((t) => t.id),
          [later.id, list.id],
        )
        const saved = (await store.tasks('d')).find((t) => t.id === later.id)!
        assert.deepEqual(
          [saved.status, saved.in_flight],
          ['PROCESSING', {raw: 'AA==', signature: 's1', lastValidBlockHeight: 9, timeoutBefore: 5}],
        )
        await store.saveInFlight(later.id, null, T0 + 2)
        assert.equal((await store.tasks('d')).find((t) => t.id === later.id)!.in_flight, null)

        const job = {
          job: 'j0',
          deployment: 'd',
          tx: 'tx0',
          market: 'market1',
          revision: 1,
          run: 'run0',
          state: 'QUEUED' as const,
          time_start: 0,
          chain_timeout: 3600,
          time_end: 0,
          // A job's own price is a u64: kept exactly, past 2^53 and past PostgreSQL's signed BIGINT.
          chain_price: '18446744073709551615',
          stop_requested: false,
          tunnel: null,
          draining_at: null,
          created_at: T0,
          updated_at: T0,
        }
        await store.recordListed(list, job, 'tx0', T0 + 3)
        assert.deepEqual(await store.job('j0'), job)
        const left = (await store.tasks('d')).find((t) => t.id === list.id)!
        assert.deepEqual([left.status, left.limit, left.tx, left.updated_at], ['PENDING', 1, 'tx0', T0 + 3])
        await store.recordListed(left, {...job, job: 'j1', tx: 'tx1'}, 'tx1', T0 + 4)
        const done = (await store.tasks('d')).find((t) => t.id === list.id)!
        assert.deepEqual([done.status, done.limit], ['DONE', 0])
        assert.deepEqual(
          (await store.tasks('d', {open: true})).map((t) => t.id),
          [later.id],
        )
        // A job listed twice is refused whole: the task is left as it was.
        await assert.rejects(store.recordListed({...done, limit: 1}, job, 'tx9', T0 + 5))
        assert.equal((await store.tasks('d')).find((t) => t.id === list.id)!.tx, 'tx1')

        await store.updateJob('j0', {stop_requested: true, state: 'RUNNING', time_start: 77, chain_price: '7'}, T0 + 6)
        assert.deepEqual(await store.job('j0'), {
          ...job,
          stop_requested: true,
          state: 'RUNNING',
          time_start: 77,
          chain_price: '7',
          updated_at: T0 + 6,
        })
        assert.deepEqual(
          (await store.jobs('d')).map((j) => j.job),
          ['j0', 'j1'],
        )
        await store.updateTask(later.id, {status: 'FAILED', attempts: 5, error: 'no'}, T0 + 7)
        assert.deepEqual(
          (await store.tasks('d', {open: true})).map((t) => t.id),
          [],
        )

        await store.addEvent(
          {deployment: 'd', category: 'Event', type: 'JOB_LIST_CONFIRMED', message: 'm1', tx: 'tx0'},
          T0 + 8,
        )
        await store.addEvent(
          {deployment: 'd', category: 'Deployment', type: 'DEPLOYMENT_RUNNING', message: 'm2', tx: null},
          T0 + 8,
        )
        assert.deepEqual(await store.events('d'), [
          {
            deployment: 'd',
            category: 'Event',
            type: 'JOB_LIST_CONFIRMED',
            message: 'm1',
            tx: 'tx0',
            created_at: T0 + 8,
          },
          {
            deployment: 'd',
            category: 'Deployment',
            type: 'DEPLOYMENT_RUNNING',
            message: 'm2',
            tx: null,
            created_at: T0 + 8,
          },
        ])

        assert.ok(await store.claimDeployment('d', 'm1', 60_000, Date.now()))
        await store.deleteDeployment('d')
        assert.equal(await store.deployment('d'), undefined)
        assert.deepEqual([await store.jobs('d'), await store.tasks('d'), await store.events('d')], [[], [], []])
        // A deleted deployment's vault stays: it may still hold the owner's funds.
        assert.ok(await store.vault(r.vault.vault))
        // Its lease went with it.
        assert.ok(await store.claimDeployment('d', 'm2', 60_000, Date.now()))
      })

      it("adds revisions (the active one in the same commit), shared vaults, and the strategies' members", async () => {
        const owner = newWallet().address
        const r = rows('d', owner, T0, {
          strategy: 'INFINITE',
          rotation_time: 900,
          startup_timeout: 5,
          throttle_rounds: 2,
          // A move under way and its queue timeout (manager/move.ts): a manager restarted mid-move reads them.
          move_from: 'market0',
          move_began: T0 + 0.5e12,
          queue_placement: '{"timeout_s":60,"tried":[]}',
          // Autoscaling's policy and budget, kept as given (a fractional target too).
          min_replicas: 0,
          max_replicas: 3,
          target_concurrency: 1.5,
          scale_down_after: 60,
          calm_since: T0 - 5,
          budget: 9_000_000_000,
        })
        await store.createDeployment(r.deployment, r.revision, r.vault)
        assert.deepEqual(await store.deployment('d'), r.deployment)
        const revised = await store.addRevision(
          {...r.revision, revision: 2, ipfs_definition_hash: 'Qm2', created_at: T0 + 1},
          T0 + 2,
        )
        assert.deepEqual([revised.active_revision, revised.updated_at], [2, T0 + 2])
        assert.deepEqual(
          (await store.revisions('d')).map((x) => x.revision),
          [1, 2],
        )
        await assert.rejects(store.addRevision({...r.revision, revision: 2}, T0 + 3))
        assert.equal((await store.deployment('d'))!.updated_at, T0 + 2, 'a refused revision changes nothing')

        // A vault made apart, then a deployment sharing it (no vault of its own).
        const shared = Keypair.generate().publicKey.toBase58()
        await store.addVault({vault: shared, owner, sealed: Buffer.from([1, 2, 3]), created_at: T0 + 5})
        const second = rows('e', owner, T0 + 6, {vault: shared, strategy: 'SCHEDULED', schedule: '*/5 * * * *'})
        await store.createDeployment(second.deployment, second.revision, null)
        assert.equal((await store.deployment('e'))!.schedule, '*/5 * * * *')
        assert.deepEqual(
          (await store.vaults(owner)).map((v) => v.vault),
          [r.vault.vault, shared],
        )

        const job = {
          job: 'j',
          deployment: 'd',
          tx: 'tx',
          market: 'm',
          revision: 2,
          run: 'run',
          state: 'QUEUED' as const,
          time_start: 0,
          chain_timeout: 60,
          stop_requested: false,
          created_at: T0,
          updated_at: T0,
        }
        const list = await store.addTask(
          {deployment: 'd', task: 'LIST', job: null, limit: 1, revision: 2, due_at: T0},
          T0,
        )
        await store.recordListed(list, job, 'tx', T0)
        await store.updateJob('j', {state: 'COMPLETED', time_end: 1_800_000_100}, T0 + 7)
        assert.equal((await store.job('j'))!.time_end, 1_800_000_100)
        // The tunnel watch's column: null until a proxy served, then its last state.
        assert.equal((await store.job('j'))!.tunnel, null)
        await store.updateJob('j', {tunnel: 'lost'}, T0 + 8)
        assert.equal((await store.job('j'))!.tunnel, 'lost')
      })

      it("marks a job draining once, its first mark kept, and reads it with the deployment's rows", async () => {
        const r = rows('d', newWallet().address, T0)
        await store.createDeployment(r.deployment, r.revision, r.vault)
        const job = {
          job: 'j',
          deployment: 'd',
          tx: 'tx',
          market: 'market',
          revision: 1,
          run: 'run',
          state: 'RUNNING' as const,
          time_start: 0,
          chain_timeout: 60,
          stop_requested: false,
          created_at: T0,
          updated_at: T0,
        }
        const list = await store.addTask(
          {deployment: 'd', task: 'LIST', job: null, limit: 1, revision: 1, due_at: T0},
          T0,
        )
        await store.recordListed(list, job, 'tx', T0)
        assert.equal((await store.job('j'))!.draining_at, null, 'not draining until a drain marks it')
        assert.equal(await store.markDraining('nope', Date.now()), undefined)
        // The store's clock: the database's in PostgreSQL, the `now` given in SQLite (this machine's for both here).
        const before = Date.now()
        const marked = await store.markDraining('j', Date.now())
        assert.ok(marked !== undefined && Math.abs(marked - before) < 5000, `marked at ${marked}`)
        const other = await opened.reopen()
        assert.equal((await other.jobs('d'))[0]!.draining_at, marked, "another manager reads it with the job's row")
        // A drain again (a stop retried, a manager restarted): the first mark stays.
        assert.equal(await other.markDraining('j', Date.now() + 60_000), marked)
        assert.equal((await store.job('j'))!.draining_at, marked)
      })

      it("keeps each gateway's requests in flight per job, read by the others while fresh, even when there are none", async () => {
        const other = await opened.reopen()
        await store.writeJobsInFlight('g1', {ja: 2, jb: 1}, Date.now())
        await other.writeJobsInFlight('g2', {}, Date.now())
        const read = (s: DeploymentStore, except: string, freshMs = 5000) =>
          s.readJobsInFlight(freshMs, except, Date.now()).then((found) => found.map((f) => [f.gateway, f.inFlight]))
        assert.deepEqual(await read(other, 'g2'), [['g1', {ja: 2, jb: 1}]])
        assert.deepEqual(await read(store, 'g1'), [['g2', {}]], 'a gateway with none in flight is there too')
        const [written] = await store.readJobsInFlight(5000, 'g1', Date.now())
        assert.ok(Math.abs(written!.at - Date.now()) < 5000, `written at ${written!.at}`)
        // Replaced whole by its next write.
        await store.writeJobsInFlight('g1', {jc: 1}, Date.now())
        assert.deepEqual(await read(other, 'g2'), [['g1', {jc: 1}]])
        assert.deepEqual(await read(other, 'nobody'), [
          ['g1', {jc: 1}],
          ['g2', {}],
        ])
        // A gateway that stops takes its figures with it.
        await store.writeJobsInFlight('g1', null, Date.now())
        assert.deepEqual(await read(other, 'g2'), [])
        // Figures older than the freshness asked for are a gateway's that stopped.
        await new Promise((resolve) => setTimeout(resolve, 300))
        assert.deepEqual(await read(store, 'g1', 200), [])
      })

      it('leases a deployment to one holder for its time, then to another', async () => {
        // The store's clock: the database's in PostgreSQL, the `now` given in SQLite (this machine's for both here).
        const other = await opened.reopen()
        assert.equal(await store.claimDeployment('d', 'm1', 60_000, Date.now()), true)
        assert.equal(await other.claimDeployment('d', 'm2', 60_000, Date.now()), false)
        // The holder renews its own, here for a short while.
        assert.equal(await store.claimDeployment('d', 'm1', 1500, Date.now()), true)
        assert.equal(await other.claimDeployment('d', 'm2', 60_000, Date.now()), false)
        assert.equal(await other.claimDeployment('e', 'm2', 60_000, Date.now()), true)
        assert.deepEqual(await other.leases(Date.now()), [
          {deployment: 'd', holder: 'm1'},
          {deployment: 'e', holder: 'm2'},
        ])
        await new Promise((resolve) => setTimeout(resolve, 1600))
        assert.deepEqual(
          await store.leases(Date.now()),
          [{deployment: 'e', holder: 'm2'}],
          'a lease run out is listed no more',
        )
        // Run out: taken over.
        assert.equal(await other.claimDeployment('d', 'm2', 60_000, Date.now()), true)
        assert.equal(await store.claimDeployment('d', 'm1', 60_000, Date.now()), false)
        // Released only by its holder.
        await store.releaseDeployment('d', 'm1')
        assert.equal(await store.claimDeployment('d', 'm1', 60_000, Date.now()), false)
        await other.releaseDeployment('d', 'm2')
        assert.equal(await store.claimDeployment('d', 'm1', 60_000, Date.now()), true)
      })

      it("keeps each gateway's last figures, read by the others while fresh, and replaced whole by its next write", async () => {
        const other = await opened.reopen()
        await store.writeLoad(
          'g1',
          [
            {deployment: 'abc', inFlight: 2, held: 1},
            {deployment: 'def', inFlight: 1, held: 0},
          ],
          Date.now(),
        )
        await other.writeLoad('g2', [{deployment: 'abc', inFlight: 3, held: 0}], Date.now())
        assert.deepEqual(await other.readLoad(5000, 'g2', Date.now(), 'abc'), [
          {deployment: 'abc', inFlight: 2, held: 1},
        ])
        assert.deepEqual(await store.readLoad(5000, 'g1', Date.now()), [{deployment: 'abc', inFlight: 3, held: 0}])
        assert.deepEqual(
          (await store.readLoad(5000, 'nobody', Date.now()))
            .map((f) => `${f.deployment}:${f.inFlight}:${f.held}`)
            .sort(),
          ['abc:2:1', 'abc:3:0', 'def:1:0'],
        )
        // A deployment left out of the next write is at zero.
        await store.writeLoad('g1', [{deployment: 'def', inFlight: 4, held: 0}], Date.now())
        assert.deepEqual(await other.readLoad(5000, 'g2', Date.now()), [{deployment: 'def', inFlight: 4, held: 0}])
        // Figures older than the freshness asked for are a gateway's that stopped.
        await new Promise((resolve) => setTimeout(resolve, 300))
        assert.deepEqual(await other.readLoad(200, 'g2', Date.now()), [])
      })

      it('records a listed job under a lease only while its holder holds it, in the same commit', async () => {
        const r = rows('d', newWallet().address, T0)
        await store.createDeployment(r.deployment, r.revision, r.vault)
        const list = await store.addTask(
          {deployment: 'd', task: 'LIST', job: null, limit: 2, revision: 1, due_at: T0},
          T0,
        )
        const job = {
          job: 'j0',
          deployment: 'd',
          tx: 'tx0',
          market: 'market1',
          revision: 1,
          run: 'run0',
          state: 'QUEUED' as const,
          time_start: 0,
          chain_timeout: 3600,
          stop_requested: false,
          created_at: T0,
          updated_at: T0,
        }
        const lost = (error: unknown) => isGpunetError(error) && error.code === 'lease_lost'
        // No lease, or another holder's: refused as lease_lost, nothing recorded (the other manager settles the LIST).
        await assert.rejects(store.recordListed(list, job, 'tx0', Date.now(), 'm1'), lost)
        assert.ok(await store.claimDeployment('d', 'm2', 60_000, Date.now()))
        await assert.rejects(store.recordListed(list, job, 'tx0', Date.now(), 'm1'), lost)
        assert.equal(await store.job('j0'), undefined)
        assert.deepEqual((await store.tasks('d'))[0]!.limit, 2)
        // A lease run out is no lease.
        assert.ok(await store.claimDeployment('d', 'm2', 200, Date.now()))
        await new Promise((resolve) => setTimeout(resolve, 300))
        await assert.rejects(store.recordListed(list, job, 'tx0', Date.now(), 'm2'), lost)
        assert.ok(await store.claimDeployment('d', 'm1', 60_000, Date.now()))
        await store.recordListed(list, job, 'tx0', Date.now(), 'm1')
        assert.equal((await store.job('j0'))!.tx, 'tx0')
        assert.deepEqual((await store.tasks('d'))[0]!.limit, 1)
      })

      it("reads many deployments' rows, jobs and open tasks at once (the worker's workloads)", async () => {
        const owner = newWallet().address
        for (const id of ['a', 'b', 'c']) {
          const r = rows(id, owner, T0)
          await store.createDeployment(r.deployment, r.revision, r.vault)
        }
        const job = (id: string, deployment: string, at: number) => ({
          job: id,
          deployment,
          tx: `tx-${id}`,
          market: 'market1',
          revision: 1,
          run: `run-${id}`,
          state: 'RUNNING' as const,
          time_start: 5,
          chain_timeout: 60,
          time_end: 0,
          stop_requested: false,
          created_at: at,
          updated_at: at,
        })
        const list = await store.addTask(
          {deployment: 'a', task: 'LIST', job: null, limit: 2, revision: 1, due_at: T0},
          T0,
        )
        await store.recordListed(list, job('a2', 'a', T0 + 2), 'tx-a2', T0 + 2)
        const left = (await store.tasks('a', {open: true}))[0]!
        await store.recordListed(left, job('a1', 'a', T0 + 1), 'tx-a1', T0 + 3)
        const stop = await store.addTask(
          {deployment: 'a', task: 'STOP', job: 'a1', limit: null, revision: 1, due_at: T0},
          T0,
        )
        const done = await store.addTask(
          {deployment: 'b', task: 'STOP', job: 'x', limit: null, revision: 1, due_at: T0},
          T0,
        )
        await store.updateTask(done.id, {status: 'DONE'}, T0 + 1)
        const extend = await store.addTask(
          {deployment: 'b', task: 'EXTEND', job: 'x', limit: null, revision: 1, due_at: T0},
          T0,
        )
        await store.saveInFlight(extend.id, {raw: 'AA==', signature: 's', lastValidBlockHeight: 1}, T0 + 2)

        const read = await store.workloads(['a', 'b', 'gone'])
        assert.deepEqual([...read.keys()].sort(), ['a', 'b'], 'only the deployments asked for that exist')
        for (const id of ['a', 'b']) {
          // The same rows, in the same order, as the per-deployment reads.
          assert.deepEqual(read.get(id), {
            deployment: await store.deployment(id),
            jobs: await store.jobs(id),
            openTasks: await store.tasks(id, {open: true}),
          })
        }
        assert.deepEqual(
          read.get('a')!.jobs.map((j) => j.job),
          ['a1', 'a2'],
        )
        assert.deepEqual(
          read.get('a')!.openTasks.map((t) => t.id),
          [stop.id],
        )
        assert.deepEqual(
          read.get('b')!.openTasks.map((t) => [t.id, t.status]),
          [[extend.id, 'PROCESSING']],
        )
        assert.deepEqual((await store.workloads([])).size, 0)
      })

      it("counts /metrics' figures by group, the same through another store on the database, with at most the vaults asked for", async () => {
        const owner = newWallet().address
        const made = [
          rows('a', owner, T0),
          rows('b', owner, T0 + 1, {status: 'RUNNING', strategy: 'INFINITE'}),
          rows('c', newWallet().address, T0 + 2),
        ]
        for (const r of made) await store.createDeployment(r.deployment, r.revision, r.vault)
        await store.addTask({deployment: 'a', task: 'LIST', job: null, limit: 1, revision: 1, due_at: T0}, T0)
        const list = await store.addTask(
          {deployment: 'b', task: 'LIST', job: null, limit: 1, revision: 1, due_at: T0},
          T0,
        )
        const job = {
          job: 'j1',
          deployment: 'b',
          tx: 'tx1',
          market: 'market1',
          revision: 1,
          run: 'r1',
          state: 'QUEUED' as const,
          time_start: 0,
          chain_timeout: 3600,
          time_end: 0,
          stop_requested: false,
          created_at: T0,
          updated_at: T0,
        }
        await store.recordListed(list, job, 'tx1', T0)
        for (const [attempts, status] of [
          [3, 'FAILED'],
          [1, 'PENDING'],
        ] as const) {
          const extend = await store.addTask(
            {deployment: 'b', task: 'EXTEND', job: 'j1', limit: null, revision: 1, due_at: T0},
            T0,
          )
          await store.updateTask(extend.id, {attempts, status, error: 'the vault is short'}, T0)
        }
        const sorted = <R>(list: R[]) => [...list].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))
        const counts = await store.metricCounts(2)
        assert.deepEqual(
          {...counts, deployments: sorted(counts.deployments), tasks: sorted(counts.tasks)},
          {
            deployments: sorted([
              {status: 'DRAFT', strategy: 'SIMPLE', count: 2},
              {status: 'RUNNING', strategy: 'INFINITE', count: 1},
            ]),
            tasks: sorted([
              {task: 'EXTEND', status: 'FAILED', count: 1, failures: 3},
              {task: 'EXTEND', status: 'PENDING', count: 1, failures: 1},
              {task: 'LIST', status: 'DONE', count: 1, failures: 0},
              {task: 'LIST', status: 'PENDING', count: 1, failures: 0},
            ]),
            jobs: [{state: 'QUEUED', count: 1}],
            vaults: made.slice(0, 2).map((r) => r.vault.vault),
            vaultTotal: 3,
          },
        )
        const other = await (await opened.reopen()).metricCounts(2)
        assert.deepEqual(
          {...other, deployments: sorted(other.deployments), tasks: sorted(other.tasks)},
          {...counts, deployments: sorted(counts.deployments), tasks: sorted(counts.tasks)},
        )
      })

      it('gives a lease to exactly one of many holders claiming at once', async () => {
        const stores = [store, await opened.reopen(), await opened.reopen()]
        const won = await Promise.all(
          Array.from({length: 12}, (_, i) => stores[i % 3]!.claimDeployment('d', `m${i}`, 1000, Date.now())),
        )
        assert.equal(won.filter(Boolean).length, 1)
      })

      it('keeps the first vault key check stored, and refuses a manager with another key', async () => {
        assert.equal(await store.keyCheck(), undefined)
        assert.equal(await store.keepKeyCheck('first'), 'first')
        assert.equal(await store.keepKeyCheck('second'), 'first')
        assert.equal(await (await opened.reopen()).keyCheck(), 'first')
      })

      it('loads the vault key the database was started with, and refuses another or a missing one', async () => {
        const {dir, remove} = await tempDir()
        try {
          const mine = join(dir, 'a', 'vaults.key')
          const key = await loadCheckedVaultKey(mine, store)
          assert.equal(key.length, 32)
          assert.deepEqual(await loadCheckedVaultKey(mine, await opened.reopen()), key)
          const owner = newWallet().address
          const r = rows('d', owner, T0)
          await store.createDeployment(r.deployment, r.revision, {...r.vault, sealed: vaultSeal(key).seal(r.keypair)})

          const wrong = join(dir, 'wrong.key')
          await writeFile(wrong, `${randomBytes(32).toString('base64')}\n`, {mode: 0o600})
          const refused = await loadCheckedVaultKey(wrong, store).then(
            () => assert.fail('accepted'),
            (e: unknown) => e,
          )
          assert.ok(
            isGpunetError(refused) && refused.code === 'vault_key_mismatch' && refused.exitCode === 3,
            String(refused),
          )
          assert.match(refused.hint ?? '', /same key/)
          const missing = await loadCheckedVaultKey(join(dir, 'none.key'), store).then(
            () => assert.fail('accepted'),
            (e: unknown) => e,
          )
          assert.ok(isGpunetError(missing) && missing.code === 'vault_key_missing', String(missing))
        } finally {
          await remove()
        }
      })

      it('keeps API keys: the per-owner limit, revocation and lookup by hash', async () => {
        const keys = createApiKeys(store.apiKeyRows, () => T0)
        const owner = newWallet().address
        const made = await keys.create(owner, 'ci')
        assert.deepEqual(await keys.lookup(made.key), {owner, id: made.id})
        assert.deepEqual(await keys.list(owner), [{id: made.id, name: 'ci', created_at: made.created_at}])
        assert.deepEqual(await keys.revoke(owner, made.id), {id: made.id, name: 'ci', created_at: made.created_at})
        assert.equal(await keys.lookup(made.key), 'revoked')
        await assert.rejects(keys.revoke(owner, made.id), /no API key \S+ of /)
        const rowsAt = store.apiKeyRows
        const row = (i: number) => ({
          id: `k${i}`,
          owner,
          name: null,
          key_sha256: randomBytes(32),
          created_at: String(i),
        })
        const made2 = await Promise.all([0, 1, 2, 3].map((i) => rowsAt.insertUnder(2, row(i))))
        assert.equal(made2.filter(Boolean).length, 2, 'two makers at once cannot both pass the limit')
      })
    },
    adapters,
  )
}
