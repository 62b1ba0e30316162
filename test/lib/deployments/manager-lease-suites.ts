/**
 * The worker's passes (tick) of several managers on one store: each deployment is worked on by one manager at a
 * time, a manager keeps what it holds from pass to pass, a manager that joins gets its share, and a manager that
 * stops cleanly or dies leaves its deployments to the others (at once, or once its leases run out). The tasks run by
 * a stand-in for the chain that leaves them due, so every pass has work; on SQLite and PostgreSQL alike.
 */
import {strict as assert} from 'node:assert'

import {Keypair} from '@solana/web3.js'

import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {claim, LEASE_MS, leaseHolder} from '../../../src/lib/deployments/store/manager-lease.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import {releaseAll, tick, type TaskRunner} from '../../../src/lib/deployments/manager/worker.js'
import {isGpunetError} from '../../../src/lib/errors.js'
import {forEachStore, type OpenedStore, type StoreAdapter} from '../../helpers/deployment-stores.js'

const T0 = 1_800_000_000_000
const COUNT = 10

/** The suites on each of `adapters`: SQLite in manager-lease.test.ts, PostgreSQL in manager-lease-postgres.e2e.test.ts. */
export function managerLeaseSuites(adapters: StoreAdapter[]): void {
  forEachStore(
    'deployment leases between managers',
    (adapter) => {
      let opened: OpenedStore
      let clock: number
      const ran: Map<string, string[]> = new Map()

      beforeEach(async () => {
        opened = await adapter.open()
        clock = T0
        ran.clear()
        for (let i = 0; i < COUNT; i++) {
          const id = `d${i}`
          const vault = Keypair.generate().publicKey.toBase58()
          // STOPPED with a STOP task due: the worker runs its tasks without planning (no chain here).
          await opened.store.createDeployment(
            {
              id,
              name: id,
              owner: 'o',
              vault,
              market: 'm',
              status: 'STOPPED',
              replicas: 1,
              timeout: 60,
              strategy: 'SIMPLE',
              time_scale: 1,
              confidential: false,
              active_revision: 1,
              started_at: null,
              created_at: T0 + i,
              updated_at: T0,
            },
            {deployment: id, revision: 1, ipfs_definition_hash: 'Qm', job_definition: '{}', created_at: T0},
            {vault, owner: 'o', sealed: Buffer.alloc(1), created_at: T0},
          )
          await opened.store.addTask({deployment: id, task: 'STOP', job: 'j', limit: null, revision: 1, due_at: T0}, T0)
        }
      })
      afterEach(async () => opened.cleanup())

      const manager = (store: DeploymentStore, holder: string): ManagerContext =>
        ({store, holder, now: () => clock, log: () => {}, env: {}}) as unknown as ManagerContext
      /** Records who ran each deployment's task, and leaves it due. */
      const run: TaskRunner = async (ctx, deployment) => {
        ran.set(deployment.id, [...(ran.get(deployment.id) ?? []), ctx.holder!])
      }
      /** One pass of `ctx`; answers the deployments it ran. */
      async function pass(ctx: ManagerContext): Promise<string[]> {
        ran.clear()
        await tick(ctx, run)
        return [...ran.keys()].sort()
      }
      const held = async (holder: string) =>
        (await opened.store.leases(clock)).filter((l) => l.holder === holder && l.deployment.startsWith('d')).length

      it('splits the deployments, keeps them from pass to pass, and hands them over on a stop and on a death', async () => {
        const a = manager(opened.store, 'A')
        const b = manager(await opened.reopen(), 'B')
        const c = manager(await opened.reopen(), 'C')
        // Alone, A takes everything.
        assert.equal((await pass(a)).length, COUNT)
        // B joins: nothing is free on its first pass, A makes room on its next, B takes its share.
        assert.deepEqual(await pass(b), [])
        const kept = await pass(a)
        assert.equal(kept.length, COUNT / 2)
        const taken = await pass(b)
        assert.deepEqual(
          [...kept, ...taken].sort(),
          Array.from({length: COUNT}, (_, i) => `d${i}`).sort(),
          'each deployment worked on by exactly one of them',
        )
        // From pass to pass each keeps its own.
        clock += 1000
        assert.deepEqual(await pass(a), kept)
        assert.deepEqual(await pass(b), taken)
        assert.deepEqual([await held('A'), await held('B')], [COUNT / 2, COUNT / 2])

        // C joins and gets a share; then B stops cleanly: the others take its deployments on their next passes.
        await pass(c)
        await pass(a)
        await pass(b)
        assert.equal((await pass(c)).length, 2)
        // Shares of ceil(10 / 3): the two before made room down to theirs.
        assert.deepEqual([await held('A'), await held('B'), await held('C')], [4, 4, 2])
        await releaseAll(b)
        assert.equal(await held('B'), 0)
        await pass(a)
        await pass(c)
        await pass(a)
        assert.equal((await held('A')) + (await held('C')), COUNT)

        // C dies (no more passes): its leases run out, then A takes everything over.
        clock += LEASE_MS / 2
        await opened.passTime(LEASE_MS / 2)
        await pass(a)
        assert.equal(await held('A'), COUNT / 2, "a live manager's leases are never taken")
        clock += LEASE_MS
        await opened.passTime(LEASE_MS)
        await pass(a)
        assert.equal((await pass(a)).length, COUNT)
        assert.equal(await held('A'), COUNT)
      })

      it("keeps leases on the database's clock: a manager off by minutes neither steals a live lease nor keeps one run out", async function () {
        // One SQLite file has one manager, on one machine: its clock is the lease clock.
        if (adapter.name !== 'PostgreSQL') return this.skip()
        const MINUTES = 10 * 60_000
        const ahead = {...manager(await opened.reopen(), 'AHEAD'), now: () => Date.now() + MINUTES} as ManagerContext
        const behind = {...manager(opened.store, 'BEHIND'), now: () => Date.now() - MINUTES} as ManagerContext
        const lost = (error: unknown) => isGpunetError(error) && error.code === 'lease_lost'
        assert.equal(await claim(behind, 'd0', 1), true)
        // AHEAD's clock says BEHIND's lease ran out 8 minutes ago; the database's says it runs 2 minutes more.
        assert.equal(await claim(ahead, 'd0', 1), false)
        await assert.rejects(leaseHolder(ahead)('d0'), lost)
        await leaseHolder(behind)('d0')
        const list = await opened.store.addTask(
          {deployment: 'd0', task: 'LIST', job: null, limit: 1, revision: 1, due_at: T0},
          T0,
        )

        // The lease runs out on the database's clock; BEHIND's clock says it runs 12 minutes more.
        await opened.passTime(LEASE_MS + 1000)
        assert.deepEqual(
          (await behind.store.leases(behind.now())).filter((l) => l.deployment === 'd0'),
          [],
          "a lease run out is not listed, whatever the manager's clock",
        )
        const job = {
          job: 'j-late',
          deployment: 'd0',
          tx: 'tx',
          market: 'm',
          revision: 1,
          run: 'r',
          state: 'QUEUED' as const,
          time_start: 0,
          chain_timeout: 60,
          stop_requested: false,
          created_at: T0,
          updated_at: T0,
        }
        await assert.rejects(behind.store.recordListed(list, job, 'tx', behind.now(), 'BEHIND'), lost)
        assert.equal(await claim(ahead, 'd0', 1), true, 'taken over once run out')
        await assert.rejects(leaseHolder(behind)('d0'), lost)
        assert.equal(await claim(behind, 'd0', 1), false)
        assert.equal(await opened.store.job('j-late'), undefined)
      })
    },
    adapters,
  )
}
