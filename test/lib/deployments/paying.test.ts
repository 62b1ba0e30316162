/**
 * paying.ts in this process, before a stand-in devnet and a SQLite store: the checks that keep a manager from
 * paying twice or cutting requests short. A manager stalled past its lease sends nothing (another one holds the
 * deployment and pays for it); bytes saved before a crash are sent again while their blockhash can still land, up to
 * and including its last valid height, and given up only after it; a running replica is drained before it is stopped.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {setTimeout as sleep} from 'node:timers/promises'

import {JobsClient} from '@nosana/kit'
import {Keypair, PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {Draining} from '../../../src/lib/deployments/draining.js'
import {leaseHolder, leaseMs} from '../../../src/lib/deployments/store/manager-lease.js'
import {runExtend, runList, runStop} from '../../../src/lib/deployments/paying/paying.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import type {DeploymentRow, TaskKind, TaskRow} from '../../../src/lib/deployments/types.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import {GpunetError} from '../../../src/lib/errors.js'
import {marketNetwork} from '../../../src/lib/market/connect.js'
import {NETWORK_PRESETS} from '../../../src/lib/market/index.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {JOB_CID} from '../../helpers/market.js'
import {putJobAccount, seedNetwork} from '../../helpers/standin-network.js'
import {cidDigest, startStandinRpc, type StandinRpc} from '../../helpers/standin.js'

const DEVNET = NETWORK_PRESETS.devnet
const T0 = 1_800_000_000_000
const kit = JobsClient as unknown as {EXTEND_DISCRIMINATOR: Uint8Array; LIST_DISCRIMINATOR: Uint8Array}

/** The jobs program's instruction a sent transaction carries: 'list', 'extend' or another. */
function kindOf(tx: {instructions: {programId: {equals(k: unknown): boolean}; data: Buffer}[]}): string {
  const ix = tx.instructions.find((i) => i.programId.equals(DEVNET.programId))
  const head = Buffer.from(ix?.data.subarray(0, 8) ?? [])
  if (head.equals(Buffer.from(kit.LIST_DISCRIMINATOR))) return 'list'
  if (head.equals(Buffer.from(kit.EXTEND_DISCRIMINATOR))) return 'extend'
  return 'other'
}

describe('deployments: paying (lease, saved bytes, drain)', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  let opened: OpenedStore
  let store: DeploymentStore
  let clock: number
  let deployment: DeploymentRow
  const seal = vaultSeal(randomBytes(32))
  const node = Keypair.generate().publicKey

  /** A manager named `holder` on the shared store, checking its lease before it pays as managers do. */
  function manager(holder: string, change: Partial<ManagerContext> = {}): ManagerContext {
    const ctx: ManagerContext = {
      store,
      net: marketNetwork(
        resolveSettings({
          network: 'devnet',
          flags: {rpcUrl: rpc.url},
          env: {GPUNET_CONTENT_STORE_URL: 'http://127.0.0.1:1', XDG_CONFIG_HOME: '/nonexistent-gpunet-config'},
        }),
      ),
      network: 'devnet',
      seal,
      now: () => clock,
      log: () => {},
      env: {},
      holder,
      ...change,
    }
    ctx.holdLease ??= leaseHolder(ctx)
    return ctx
  }

  async function start(runBy?: boolean): Promise<void> {
    rpc = await startStandinRpc()
    rpc.unitsConsumed = 20_000
    clock = T0
    opened = await sqliteStores.open()
    store = opened.store
    const vault = Keypair.generate()
    // Each listed job is taken by a node at once when `runBy`: a running replica.
    seedNetwork(rpc, 'devnet', vault.publicKey, runBy ? node : undefined)
    const id = `dep-${randomBytes(4).toString('hex')}`
    deployment = {
      id,
      name: 'svc',
      owner: Keypair.generate().publicKey.toBase58(),
      vault: vault.publicKey.toBase58(),
      market: DEVNET.market!.toBase58(),
      status: 'RUNNING',
      replicas: 1,
      timeout: 10,
      strategy: 'SIMPLE',
      time_scale: 1,
      confidential: false,
      active_revision: 1,
      started_at: T0,
      created_at: T0,
      updated_at: T0,
    }
    await store.createDeployment(
      deployment,
      {deployment: id, revision: 1, ipfs_definition_hash: JOB_CID, job_definition: '{}', created_at: T0},
      {vault: deployment.vault, owner: deployment.owner, sealed: seal.seal(vault), created_at: T0},
    )
  }
  afterEach(async () => {
    await opened.cleanup()
    await rpc.close()
  })

  const task = async (kind: TaskKind, job: string | null = null): Promise<TaskRow> =>
    store.addTask(
      {deployment: deployment.id, task: kind, job, limit: kind === 'LIST' ? 1 : null, revision: 1, due_at: clock},
      clock,
    )
  const reread = async (id: number): Promise<TaskRow> => (await store.tasks(deployment.id)).find((t) => t.id === id)!
  const sends = () => rpc.requests.filter((r) => r.method === 'sendTransaction').length

  /** Manager A lists one job under its lease; returns A. */
  async function listedByA(): Promise<{a: ManagerContext; job: string}> {
    const a = manager('manager-a')
    assert.equal(await store.claimDeployment(deployment.id, 'manager-a', leaseMs(1), clock), true)
    await runList(a, deployment, await task('LIST'))
    const [row] = await store.jobs(deployment.id)
    assert.ok(row, 'A listed its job')
    return {a, job: row.job}
  }

  /** A stalls past its lease, and manager B takes the deployment over. */
  async function stallPastLease(): Promise<void> {
    clock += leaseMs(1) + 1
    assert.equal(await store.claimDeployment(deployment.id, 'manager-b', leaseMs(1), clock), true)
  }

  async function leaseLost(promise: Promise<unknown>): Promise<void> {
    await assert.rejects(promise, (e: unknown) => e instanceof GpunetError && e.code === 'lease_lost')
  }

  it('a manager stalled past its lease sends no listing: the one that took over pays for it', async () => {
    await start()
    const a = manager('manager-a')
    assert.equal(await store.claimDeployment(deployment.id, 'manager-a', leaseMs(1), clock), true)
    await stallPastLease()
    const list = await task('LIST')
    await leaseLost(runList(a, deployment, list))
    assert.equal(sends(), 0, 'no transaction sent')
    assert.deepEqual(rpc.sent, [])
    assert.equal((await reread(list.id)).in_flight, null, 'nothing saved to send later either')
    assert.deepEqual(await store.jobs(deployment.id), [])
  })

  it('a manager stalled past its lease sends no extension', async () => {
    await start()
    const {a, job} = await listedByA()
    assert.deepEqual(rpc.sent.map(kindOf), ['list'])
    await stallPastLease()
    const extend = await task('EXTEND', job)
    await leaseLost(runExtend(a, deployment, extend))
    assert.deepEqual(rpc.sent.map(kindOf), ['list'], 'no extension sent')
    assert.equal((await reread(extend.id)).in_flight, null)
    // Its lease back, the same manager extends.
    clock += leaseMs(1) + 1
    assert.equal(await store.claimDeployment(deployment.id, 'manager-a', leaseMs(1), clock), true)
    await runExtend(a, deployment, extend)
    assert.deepEqual(rpc.sent.map(kindOf), ['list', 'extend'])
  })

  /** The store of a manager killed right after it saved bytes to send (the list-saved or extend-saved crash point). */
  function killedAtSaved(): DeploymentStore {
    return new Proxy(store, {
      get(target, name: keyof DeploymentStore) {
        if (name !== 'saveInFlight') return (target[name] as (...a: unknown[]) => unknown).bind(target)
        return async (...args: Parameters<DeploymentStore['saveInFlight']>) => {
          await target.saveInFlight(...args)
          if (args[1]) throw new Error('killed at saved')
        }
      },
    })
  }

  /** A manager killed right after saving its listing's bytes (the list-saved crash point), before sending them. */
  async function killedAfterSaving(): Promise<TaskRow> {
    const a = manager('manager-a')
    const killed = new Proxy(store, {
      get(target, name: keyof DeploymentStore) {
        if (name !== 'saveInFlight') return (target[name] as (...a: unknown[]) => unknown).bind(target)
        return async (...args: Parameters<DeploymentStore['saveInFlight']>) => {
          await target.saveInFlight(...args)
          if (args[1]) throw new Error('killed at list-saved')
        }
      },
    })
    assert.equal(await store.claimDeployment(deployment.id, 'manager-a', leaseMs(1), clock), true)
    const list = await task('LIST')
    await assert.rejects(runList({...a, store: killed}, deployment, list), /killed at list-saved/)
    assert.equal(sends(), 0)
    const saved = await reread(list.id)
    assert.ok(saved.in_flight?.job, 'its bytes were saved')
    return saved
  }

  it('sends saved bytes again at their last valid block height: they can still land there', async () => {
    await start()
    const saved = await killedAfterSaving()
    // The stand-in's height has not moved since the blockhash was fetched: one step of 150 reaches its last valid one.
    rpc.heightStep = 150
    await runList(manager('manager-a'), deployment, saved)
    assert.deepEqual(rpc.sent.map(kindOf), ['list'], 'the saved bytes went out')
    const jobs = await store.jobs(deployment.id)
    assert.deepEqual(
      jobs.map((j) => j.job),
      [saved.in_flight!.job],
    )
    assert.equal((await reread(saved.id)).in_flight, null)
    const [task_] = await store.tasks(deployment.id)
    assert.equal(task_!.status, 'DONE')
    const events = await store.events(deployment.id)
    assert.deepEqual(
      events.map((e) => [e.type, e.message, e.tx]),
      [['JOB_LIST_CONFIRMED', `job ${saved.in_flight!.job} listed`, saved.in_flight!.signature]],
    )
  })

  it('settles an extension saved before a crash: sent again while valid, or recorded from the chain unsent', async () => {
    await start()
    const {a, job} = await listedByA()
    const extend = await task('EXTEND', job)
    await assert.rejects(runExtend({...a, store: killedAtSaved()}, deployment, extend), /killed at saved/)
    const saved = await reread(extend.id)
    const {timeoutBefore, timeoutAfter, signature} = saved.in_flight!
    assert.deepEqual(rpc.sent.map(kindOf), ['list'])
    await runExtend(a, deployment, saved)
    assert.deepEqual(rpc.sent.map(kindOf), ['list', 'extend'], 'the saved bytes went out')
    const done = await reread(extend.id)
    assert.deepEqual([done.status, done.tx, done.in_flight], ['DONE', signature, null])
    assert.equal((await store.job(job))!.chain_timeout, timeoutAfter)
    const events = await store.events(deployment.id)
    assert.deepEqual(events.at(-1), {
      ...events.at(-1)!,
      type: 'JOB_EXTEND_SUCCESSFUL',
      message: `job ${job} extended from ${timeoutBefore} s to ${timeoutAfter} s`,
      tx: signature,
    })

    // Another one whose bytes landed before the crash: the chain's timeout has moved, so nothing is sent again.
    const next = await task('EXTEND', job)
    await assert.rejects(runExtend({...a, store: killedAtSaved()}, deployment, next), /killed at saved/)
    const landed = (await reread(next.id)).in_flight!
    putJobAccount(rpc, 'devnet', new PublicKey(job), {
      ipfsJob: cidDigest(JOB_CID),
      timeout: BigInt(landed.timeoutAfter!),
      state: 0,
      payer: new PublicKey(deployment.vault),
    })
    await runExtend(a, deployment, await reread(next.id))
    assert.deepEqual(rpc.sent.map(kindOf), ['list', 'extend'], 'not sent twice')
    assert.equal((await reread(next.id)).status, 'DONE')
    assert.equal((await store.job(job))!.chain_timeout, landed.timeoutAfter)
  })

  it('forgets bytes the program refused: they never land, and the next run builds new ones', async () => {
    await start()
    assert.equal(await store.claimDeployment(deployment.id, 'manager-a', leaseMs(1), clock), true)
    // Refused at the send (its preflight), after the bytes were saved.
    rpc.sendError = {
      code: -32002,
      message: 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1770',
      data: {err: {InstructionError: [0, {Custom: 6000}]}, logs: ['Program log: refused']},
    }
    const list = await task('LIST')
    await assert.rejects(
      runList(manager('manager-a'), deployment, list),
      (e: unknown) => e instanceof GpunetError && e.code === 'transaction_failed',
    )
    assert.equal(sends(), 1)
    assert.equal((await reread(list.id)).in_flight, null)
    assert.deepEqual(rpc.sent, [])
  })

  it('gives saved bytes up one block after their last valid height, sending nothing', async () => {
    await start()
    const saved = await killedAfterSaving()
    rpc.heightStep = 151
    await runList(manager('manager-a'), deployment, saved)
    assert.equal(sends(), 0)
    assert.deepEqual(await store.jobs(deployment.id), [])
    assert.equal((await reread(saved.id)).in_flight, null, 'forgotten: the next run builds new bytes')
  })

  it('stops a running replica only once the requests in flight to it have finished', async () => {
    await start(true)
    let inFlight = 1
    const draining = new Draining()
    draining.countInFlightWith(() => inFlight)
    const {job} = await listedByA()
    const stopping = runStop(manager('manager-a', {draining}), deployment, await task('STOP', job))
    await sleep(300)
    assert.equal(draining.isDraining(job), true, 'taken off the stable URL first')
    assert.equal(sends(), 1, 'not stopped while a request is in flight')
    inFlight = 0
    await stopping
    assert.equal(sends(), 2, 'stopped once drained')
    const stop = rpc.sent[1]!
    const done = (await store.tasks(deployment.id)).find((t) => t.task === 'STOP')
    const signature = bs58.encode(stop.signature!)
    assert.deepEqual([done!.status, done!.tx], ['DONE', signature])
    const events = await store.events(deployment.id)
    assert.deepEqual(
      events.filter((e) => e.type === 'JOB_STOPPED_CONFIRMED').map((e) => [e.message, e.tx]),
      [[`job ${job} stopped`, signature]],
    )
  })
})
