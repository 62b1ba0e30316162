/**
 * Paying safely across crashes: `gpunet deployment serve`, a real process against a real localnet, killed by
 * SIGKILL at each named crash point (between "saved" and "sent", between "sent" and "recorded"), then started
 * again on the same data directory. The chain shows no job listed twice, none orphaned, no extension paid twice,
 * and the task ends recorded.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {join} from 'node:path'

import {PublicKey} from '@solana/web3.js'

import {CRASH_ENV, CRASH_POINTS, type CrashPoint} from '../../src/lib/deployments/crash-points.js'
import {openSqlite} from '../../src/lib/sqlite/open.js'
import {
  api,
  createDeployment,
  deploymentEvents,
  deploymentJobs,
  jobsPaidBy,
  nodeTakesNextJob,
  statusWhen,
  tasksWhen,
  deploymentTasks,
  serving,
  spawnServe,
  type ServeProcess,
} from '../helpers/deployments.js'
import {useLocalnet} from '../helpers/localnet.js'
import {removeDir, tempDir} from '../helpers/files.js'

type Manager = ServeProcess

describe('deployment serve: crash points', function () {
  this.timeout(240_000)
  const t = useLocalnet()
  const running: Manager[] = []
  let dir: string

  before(() => {
    dir = tempDir('gpunet-manager-')
  })
  after(async () => {
    for (const m of running) if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGTERM')
    removeDir(dir)
  })

  /** Starts `gpunet deployment serve` on the test's localnet; answers once it listens. */
  async function serve(dataDir: string, crashAt?: CrashPoint): Promise<Manager> {
    const manager = await serving(spawnServe(t, dir, dataDir, crashAt))
    running.push(manager)
    return manager
  }

  async function killedAt(manager: Manager, point: CrashPoint): Promise<void> {
    if (manager.child.exitCode === null && manager.child.signalCode === null) await once(manager.child, 'exit')
    assert.equal(manager.child.signalCode, 'SIGKILL', manager.stderr())
    assert.match(manager.stderr(), new RegExp(`${CRASH_ENV}=${point}: killing`))
  }

  for (const point of CRASH_POINTS) {
    it(`killed at ${point}, restarted: nothing paid twice, nothing orphaned, the task recorded`, async () => {
      const owner = t.wallet
      const dataDir = join(dir, point)
      const first = await serve(dataDir, point)
      // Jobs of 15 s on chain, extended by 15 s 1.5 s before their end.
      const d = await createDeployment(first.url, owner, {replicas: 1, timeout: 10, time_scale: 40})
      const vault = new PublicKey(d.vault)
      t.ln.node.fund(vault, {lamports: 100_000_000n, tokens: 50_000n})
      assert.equal((await api(first.url, owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
      if (point.startsWith('extend')) {
        await tasksWhen(first.url, owner, d.id, (tasks) => tasks.some((x) => x.task === 'LIST' && x.status === 'DONE'))
        await nodeTakesNextJob(t)
      }
      await killedAt(first, point)
      // Killed with the transaction saved: the task is PROCESSING with its signed bytes on disk.
      const saved = openSqlite(join(dataDir, 'deployments.db'))
      const inFlight = saved
        .prepare("SELECT status, in_flight FROM tasks WHERE task = ? AND status = 'PROCESSING'")
        .all(point.startsWith('list') ? 'LIST' : 'EXTEND') as {status: string; in_flight: string}[]
      saved.close()
      assert.equal(inFlight.length, 1)
      const {signature} = JSON.parse(inFlight[0]!.in_flight) as {signature: string}
      const landed = (await t.connection.getSignatureStatuses([signature])).value[0]
      // "saved": killed before the send; "sent": killed after it landed.
      assert.equal(landed != null && !landed.err, point.endsWith('-sent'))

      const second = await serve(dataDir)
      const kind = point.startsWith('list') ? 'LIST' : 'EXTEND'
      const tasks = await tasksWhen(second.url, owner, d.id, (all) =>
        all.some((x) => x.task === kind && x.status === 'DONE' && x.tx),
      )
      const settled = tasks.find((x) => x.task === kind && x.status === 'DONE' && x.tx)!
      assert.equal(settled.attempts, 0, 'settled from what was saved, not by a retry after a failure')
      assert.equal(settled.tx, signature, 'the saved transaction is the one recorded')
      // One job on chain, and it is the one recorded (before the stop: a delisted job's account is closed).
      const onChain = await jobsPaidBy(t, vault)
      const rows = await deploymentJobs(second.url, owner, d.id)
      assert.equal(onChain.size, 1, `jobs paid by the vault: ${[...onChain.keys()].join(', ')}`)
      assert.deepEqual(
        rows.map((r) => r.job),
        [...onChain.keys()],
      )
      await api(second.url, owner, 'POST', `/api/deployments/${d.id}/stop`)
      await statusWhen(second.url, owner, d.id, 'STOPPED').catch((error: Error) => {
        throw new Error(`${error.message}; the manager said: ${second.stderr()}`)
      })

      const after = await deploymentTasks(second.url, owner, d.id)
      const extensions = after.filter((x) => x.task === 'EXTEND' && x.status === 'DONE' && x.tx)
      if (kind === 'EXTEND') {
        // At rest, each extension recorded once is paid once: the timeout grew by 15 s for each, no more.
        const [account] = [...(await jobsPaidBy(t, vault)).values()]
        assert.ok(extensions.length >= 1)
        assert.equal(account!.timeout, 15n * BigInt(1 + extensions.length))
      }
      const events = await deploymentEvents(second.url, owner, d.id)
      assert.equal(events.filter((e) => e.type === 'JOB_LIST_CONFIRMED').length, 1)
      assert.equal(events.filter((e) => e.type === 'JOB_EXTEND_SUCCESSFUL').length, extensions.length)
      assert.ok(
        after.every((x) => x.status === 'DONE'),
        JSON.stringify(after),
      )
      second.child.kill('SIGTERM')
      await once(second.child, 'exit')
    })
  }
})
