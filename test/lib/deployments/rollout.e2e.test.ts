/**
 * Replica counts and revisions at the manager inside a real localnet, over real HTTP and a real SQLite file, with
 * nodes (keys of the test, staked) taking the market's queued jobs as the network's nodes do: scale 2 -> 3 -> 1
 * (queued jobs stopped first), a revision rolled out replica by replica (the old stopped only once a new one runs),
 * a revision whose replicas never run rolled back, and one whose replica ends on its own rolled back, with an event.
 */
import {strict as assert} from 'node:assert'

import {Keypair, LAMPORTS_PER_SOL, PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import {startDeploymentManager} from '../../../src/lib/deployments/manager.js'
import {verifySignature} from '../../../src/lib/keys/ed25519.js'
import {localnetNodeNetwork} from '../../../src/lib/localnet/nodes/node-network.js'
import {NodeChainClient} from '../../../src/lib/node/chain-client.js'
import {parseHeader} from '../../../src/lib/node-api/protocol.js'

import {
  api,
  createDeployment,
  deploymentEvents,
  deploymentJobs,
  type JobJson,
  jobsPaidBy,
  nodeTakesNextJob,
  SERVICE_DEFINITION,
  statusWhen,
  localnetClient,
} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {startServer} from '../../helpers/http.js'
import {JOB_CID} from '../../helpers/market.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {removeDir, tempDir} from '../../helpers/files.js'

type Job = JobJson & {revision: number}

/** The definition of revision 2: another command. */
const REVISED = {
  ...SERVICE_DEFINITION,
  ops: [{...SERVICE_DEFINITION.ops[0]!, args: {...SERVICE_DEFINITION.ops[0]!.args, cmd: ['sleep', '3599']}}],
}

describe('deployment manager: scale and revise (rolling, rolled back)', function () {
  this.timeout(180_000)
  const t = useLocalnet()
  /** The manager the helpers below call: the localnet's, unless a test runs them on one of its own (onOwnManager). */
  let own: string | null = null
  const url = () => own ?? (t.ln.runtime.deploymentManager as string)
  /** Runs `body` with the helpers below on a manager of its own on the localnet's chain, whose clock is `now`. */
  async function onOwnManager(now: () => number, body: () => Promise<void>) {
    const dir = tempDir()
    const manager = await startDeploymentManager({
      dataDir: dir,
      net: localnetClient(t),
      network: 'localnet',
      port: 0,
      now,
    })
    own = manager.url
    try {
      await body()
    } finally {
      own = null
      await manager.close()
      removeDir(dir)
    }
  }
  const jobs = async (id: string) => (await deploymentJobs(url(), t.wallet, id)) as Job[]
  const live = (list: Job[]) => list.filter((j) => j.state === 'QUEUED' || j.state === 'RUNNING')
  const jobsWhen = (what: string, id: string, done: (list: Job[]) => boolean, ms = 30_000) =>
    eventually(what, ms, async () => {
      const list = await jobs(id)
      return done(list) ? list : undefined
    })
  const start = async (body: Record<string, unknown>) => {
    const d = await createDeployment(url(), t.wallet, body)
    t.ln.node.fund(new PublicKey(d.vault), {lamports: 500_000_000n, tokens: 10_000_000n})
    assert.equal((await api(url(), t.wallet, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
    return d
  }
  const stop = async (id: string) => {
    assert.equal((await api(url(), t.wallet, 'POST', `/api/deployments/${id}/stop`)).status, 200)
    await statusWhen(url(), t.wallet, id, 'STOPPED')
  }

  it('scale 2 -> 3 -> 1: the shortfall listed, then the excess stopped, queued jobs first', async () => {
    const d = await start({replicas: 2, timeout: 10, time_scale: 10, strategy: 'SIMPLE'})
    await jobsWhen('2 jobs listed', d.id, (list) => live(list).length === 2)
    await nodeTakesNextJob(t)
    const [running] = await jobsWhen('one running', d.id, (list) => list.some((j) => j.state === 'RUNNING')).then(
      (list) => list.filter((j) => j.state === 'RUNNING'),
    )

    const up = await api(url(), t.wallet, 'PATCH', `/api/deployments/${d.id}/update-replica-count`, {replicas: 3})
    assert.equal(up.status, 200, JSON.stringify(up.body))
    assert.equal(up.body.replicas, 3)
    await jobsWhen('3 jobs live', d.id, (list) => live(list).length === 3)

    assert.equal(
      (await api(url(), t.wallet, 'PATCH', `/api/deployments/${d.id}/update-replica-count`, {replicas: 1})).status,
      200,
    )
    const after = await jobsWhen('1 job live', d.id, (list) => live(list).length === 1)
    // The two queued ones went; the one a node runs stayed.
    assert.deepEqual(
      live(after).map((j) => j.job),
      [running!.job],
    )
    assert.equal(after.length, 3)
    const onChain = await jobsPaidBy(t, new PublicKey(d.vault))
    assert.equal(onChain.size, 1, 'the two queued jobs were delisted (their accounts closed)')
    assert.equal((await api(url(), t.wallet, 'GET', `/api/deployments/${d.id}`)).body.active_jobs, 1)
    await stop(d.id)
  })

  it('a revision rolls out one replica at a time, the old stopped only once a new one runs; one that never runs is rolled back', async () => {
    // The manager's clock is moved past the rollout deadline rather than waited on: its real poll still decides, on
    // the real chain. The deadline waited in wall time is the last test's (15 s); the decision to the millisecond is
    // rollout-clock.test.ts's.
    let skew = 0
    await onOwnManager(
      () => Date.now() + skew,
      async () => {
        // time_scale 20: a new replica must run within 30 s.
        const d = await start({replicas: 2, timeout: 10, time_scale: 20, strategy: 'SIMPLE'})
        await jobsWhen('2 jobs listed', d.id, (list) => live(list).length === 2)
        await nodeTakesNextJob(t)
        await nodeTakesNextJob(t)
        const old = await jobsWhen('2 running', d.id, (list) => list.filter((j) => j.state === 'RUNNING').length === 2)

        // An invalid definition changes nothing.
        const refused = await api(url(), t.wallet, 'POST', `/api/deployments/${d.id}/create-revision`, {
          version: '0.1',
          type: 'container',
          ops: [],
        })
        assert.equal(refused.status, 400, JSON.stringify(refused.body))
        const unrevised = await api<{revisions: unknown[]}>(
          url(),
          t.wallet,
          'GET',
          `/api/deployments/${d.id}/revisions`,
        )
        assert.equal(unrevised.body.revisions.length, 1)
        assert.equal((await api(url(), t.wallet, 'GET', `/api/deployments/${d.id}`)).body.active_revision, 1)

        const revised = await api(url(), t.wallet, 'POST', `/api/deployments/${d.id}/create-revision`, REVISED)
        assert.equal(revised.status, 200, JSON.stringify(revised.body))
        assert.equal(revised.body.active_revision, 2)
        assert.equal((revised.body.revisions as unknown[]).length, 2)

        // One replica of revision 2 listed; while no node runs it, both old ones keep running.
        const surge = await jobsWhen('a job of revision 2', d.id, (list) => list.some((j) => j.revision === 2))
        assert.equal(surge.filter((j) => j.revision === 2).length, 1)
        await new Promise((resolve) => setTimeout(resolve, 3000))
        let now = await jobs(d.id)
        assert.equal(now.filter((j) => j.revision === 2).length, 1, 'one new replica at a time')
        assert.deepEqual(
          live(now)
            .filter((j) => j.revision === 1)
            .map((j) => j.state),
          ['RUNNING', 'RUNNING'],
        )

        // It runs: one old replica is stopped, a second new one listed; the other old one runs on.
        await nodeTakesNextJob(t)
        now = await jobsWhen(
          'one old replica stopped',
          d.id,
          (list) => live(list).filter((j) => j.revision === 1).length === 1,
        )
        now = await jobsWhen(
          'a second job of revision 2',
          d.id,
          (list) => list.filter((j) => j.revision === 2).length === 2,
        )
        assert.equal(live(now).filter((j) => j.revision === 1 && j.state === 'RUNNING').length, 1)
        await nodeTakesNextJob(t)
        now = await jobsWhen('revision 2 everywhere', d.id, (list) => live(list).every((j) => j.revision === 2))
        assert.equal(live(now).length, 2)
        assert.deepEqual(
          now
            .filter((j) => j.revision === 1)
            .map((j) => j.job)
            .sort(),
          old.map((j) => j.job).sort(),
        )
        await eventually('REVISION_ROLLED_OUT', 10_000, async () =>
          (await deploymentEvents(url(), t.wallet, d.id)).some((e) => e.type === 'REVISION_ROLLED_OUT')
            ? true
            : undefined,
        )

        // Revision 3: no node takes its replica, so after 30 s on the manager's clock it is rolled back to 2, its job
        // stopped.
        const third = await api(url(), t.wallet, 'POST', `/api/deployments/${d.id}/create-revision`, SERVICE_DEFINITION)
        assert.equal(third.body.active_revision, 3)
        await jobsWhen('a job of revision 3', d.id, (list) => list.some((j) => j.revision === 3))
        skew += 30_000
        const back = await eventually('the rollback', 60_000, async () => {
          const events = await deploymentEvents(url(), t.wallet, d.id)
          return events.find((e) => e.type === 'REVISION_ROLLED_BACK')
        })
        assert.match(back.message, /revision 3 rolled back to 2: job \S+ did not serve within 30 s/)
        assert.equal((await api(url(), t.wallet, 'GET', `/api/deployments/${d.id}`)).body.active_revision, 2)
        now = await jobsWhen('revision 3 stopped', d.id, (list) => live(list).every((j) => j.revision === 2))
        assert.equal(live(now).length, 2, 'the replicas of revision 2 served throughout')
        assert.ok(live(now).every((j) => j.state === 'RUNNING'))
        // Revision 3 stays recorded; it can be made active again, and an unknown one is 404.
        const revisions = await api<{revisions: {revision: number}[]}>(
          url(),
          t.wallet,
          'GET',
          `/api/deployments/${d.id}/revisions?sort_order=asc`,
        )
        assert.deepEqual(
          revisions.body.revisions.map((r) => r.revision),
          [1, 2, 3],
        )
        const unknown = await api(url(), t.wallet, 'PATCH', `/api/deployments/${d.id}/update-active-revision`, {
          active_revision: 9,
        })
        assert.equal(unknown.status, 404)
        await stop(d.id)
      },
    )
  })

  it("a new replica serves once its node's API reports its exposed port online: until then the old one runs on", async () => {
    // A manager of the test's own, whose nodes' APIs are one stand-in: it says each port is online when told to.
    let online = false
    const asked: {path: string; authorization: string}[] = []
    const nodeApi = await startServer((req, res) => {
      asked.push({path: req.url ?? '', authorization: String(req.headers.authorization ?? '')})
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify({urls: {svc: {port: 8080, status: online ? 'ONLINE' : 'OFFLINE'}}}))
    })
    const dir = tempDir()
    const net = localnetClient(t, {GPUNET_NODE_API_URL: `${nodeApi.url}/{node}`})
    const manager = await startDeploymentManager({dataDir: dir, net, network: 'localnet', port: 0})
    try {
      const owner = t.wallet
      const d = await createDeployment(manager.url, owner, {
        replicas: 1,
        timeout: 10,
        time_scale: 20,
        strategy: 'SIMPLE',
      })
      t.ln.node.fund(new PublicKey(d.vault), {lamports: 500_000_000n, tokens: 10_000_000n})
      assert.equal((await api(manager.url, owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
      const first = await eventually('the job listed', 30_000, async () => {
        const list = (await deploymentJobs(manager.url, owner, d.id)) as Job[]
        return list.length === 1 ? list[0] : undefined
      })
      await nodeTakesNextJob(t)
      const exposing = {
        ...SERVICE_DEFINITION,
        ops: [{...SERVICE_DEFINITION.ops[0]!, args: {...SERVICE_DEFINITION.ops[0]!.args, expose: 8080}}],
      }
      const revised = await api(manager.url, owner, 'POST', `/api/deployments/${d.id}/create-revision`, exposing)
      assert.equal(revised.status, 200, JSON.stringify(revised.body))
      await eventually('a job of revision 2', 30_000, async () =>
        ((await deploymentJobs(manager.url, owner, d.id)) as Job[]).some((j) => j.revision === 2) ? true : undefined,
      )
      const node = await nodeTakesNextJob(t)
      // Running, its port reported offline: asked about, not taken for serving.
      await eventually('the node API asked', 20_000, async () =>
        asked.some(({path}) => path.startsWith(`/${node.publicKey.toBase58()}/job/`)) ? true : undefined,
      )
      // Asked as the job's poster: the vault signed gpunet's node-API message naming that node and job.
      const header = parseHeader(asked.at(-1)!.authorization)
      assert.ok('message' in header, JSON.stringify(header))
      assert.match(header.message, new RegExp(node.publicKey.toBase58()))
      assert.ok(
        verifySignature(bs58.decode(header.signature), Buffer.from(header.message), new PublicKey(d.vault).toBytes()),
      )
      // Fixed: a window of several worker polls in which the old replica must not be stopped.
      await new Promise((resolve) => setTimeout(resolve, 2000))
      let list = (await deploymentJobs(manager.url, owner, d.id)) as Job[]
      assert.equal(live(list).length, 2, 'the old replica runs on while the new one does not serve')
      assert.ok(live(list).some((j) => j.job === first!.job))
      online = true
      list = await eventually('revision 2 rolled out', 20_000, async () => {
        const now = (await deploymentJobs(manager.url, owner, d.id)) as Job[]
        return live(now).length === 1 && live(now)[0]!.revision === 2 ? now : undefined
      })
      assert.ok(!live(list).some((j) => j.job === first!.job))
      const events = await deploymentEvents(manager.url, owner, d.id)
      assert.ok(events.some((e) => e.type === 'REVISION_ROLLED_OUT'))
      assert.ok(!events.some((e) => e.type === 'REVISION_ROLLED_BACK'))
      assert.equal((await api(manager.url, owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
      await statusWhen(manager.url, owner, d.id, 'STOPPED')
    } finally {
      await manager.close()
      await nodeApi.close()
      removeDir(dir)
    }
  })

  it('a new replica that ends on its own (its command exits at once: its node finishes it) rolls the revision back', async () => {
    // time_scale 20: the deadline is 30 s, so a rollback sooner is the replica's end, not the deadline.
    const d = await start({replicas: 1, timeout: 10, time_scale: 20, strategy: 'SIMPLE'})
    await jobsWhen('1 job listed', d.id, (list) => live(list).length === 1)
    await nodeTakesNextJob(t)
    const [old] = await jobsWhen('it runs', d.id, (list) => list[0]?.state === 'RUNNING')
    const exiting = {
      ...SERVICE_DEFINITION,
      ops: [{...SERVICE_DEFINITION.ops[0]!, args: {...SERVICE_DEFINITION.ops[0]!.args, cmd: ['true']}}],
    }
    const revised = await api(url(), t.wallet, 'POST', `/api/deployments/${d.id}/create-revision`, exiting)
    assert.equal(revised.status, 200, JSON.stringify(revised.body))
    const [fresh] = (await jobsWhen('a job of revision 2', d.id, (list) => list.some((j) => j.revision === 2))).filter(
      (j) => j.revision === 2,
    )
    // A node takes it and, its command over at once, finishes it with a result: COMPLETED on chain, not stopped.
    const chain = new NodeChainClient(localnetNodeNetwork(t.ln.node), Keypair.generate())
    await chain.prepare(BigInt(LAMPORTS_PER_SOL))
    const runAddress = await chain.work()
    const run = (await chain.run(runAddress))!
    assert.equal(run.job.toBase58(), fresh!.job)
    const began = Date.now()
    await chain.finish(run.job, runAddress, JOB_CID)

    const back = await eventually('the rollback', 20_000, async () =>
      (await deploymentEvents(url(), t.wallet, d.id)).find((e) => e.type === 'REVISION_ROLLED_BACK'),
    )
    assert.ok(Date.now() - began < 30_000, 'rolled back for its end, before the 30-s deadline')
    assert.equal(back.message, `revision 2 rolled back to 1: job ${fresh!.job} ended on its own; 0 of its jobs stopped`)
    assert.equal((await api(url(), t.wallet, 'GET', `/api/deployments/${d.id}`)).body.active_revision, 1)
    // The old replica served throughout and is the only one; revision 2 is listed no more.
    // Fixed: a window of several worker polls in which no other replica may be listed.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const after = await jobs(d.id)
    assert.deepEqual(
      live(after).map((j) => [j.job, j.state]),
      [[old!.job, 'RUNNING']],
    )
    assert.equal(after.filter((j) => j.revision === 2).length, 1, 'no other replica of revision 2 listed')
    assert.equal(after.find((j) => j.job === fresh!.job)!.state, 'COMPLETED')
    assert.ok(!(await deploymentEvents(url(), t.wallet, d.id)).some((e) => e.type === 'REVISION_ROLLED_OUT'))
    await stop(d.id)
  })

  it('a new replica whose job runs but whose exposed port its node never reports online does not serve: rolled back', async () => {
    // time_scale 40: a new replica must serve within 15 s.
    const d = await start({replicas: 1, timeout: 10, time_scale: 40, strategy: 'SIMPLE'})
    await jobsWhen('1 job listed', d.id, (list) => live(list).length === 1)
    await nodeTakesNextJob(t)
    const [old] = await jobsWhen('it runs', d.id, (list) => list[0]?.state === 'RUNNING')
    const exposing = {
      ...SERVICE_DEFINITION,
      ops: [{...SERVICE_DEFINITION.ops[0]!, args: {...SERVICE_DEFINITION.ops[0]!.args, expose: 8080}}],
    }
    const revised = await api(url(), t.wallet, 'POST', `/api/deployments/${d.id}/create-revision`, exposing)
    assert.equal(revised.status, 200, JSON.stringify(revised.body))
    await jobsWhen('a job of revision 2', d.id, (list) => list.some((j) => j.revision === 2))
    // A node runs it, but no node API says its port is online (this node has none).
    await nodeTakesNextJob(t)
    await jobsWhen('the new job running', d.id, (list) => list.some((j) => j.revision === 2 && j.state === 'RUNNING'))
    assert.equal(live(await jobs(d.id)).length, 2, 'the old replica is kept while the new one does not serve')
    const back = await eventually('the rollback', 60_000, async () =>
      (await deploymentEvents(url(), t.wallet, d.id)).find((e) => e.type === 'REVISION_ROLLED_BACK'),
    )
    assert.match(back.message, /revision 2 rolled back to 1: job \S+ did not serve within 15 s/)
    const after = await jobsWhen('the new one stopped', d.id, (list) => live(list).length === 1)
    assert.equal(live(after)[0]!.job, old!.job)
    await stop(d.id)
  })
})
