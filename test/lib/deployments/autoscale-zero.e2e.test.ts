/**
 * Autoscaling from zero behind gpunet's gateway, end to end on the localnet (podman, 3 nodes): a deployment of a
 * service whose answers take a second, `min 0, max 3, target 2`, idle reaches 0 replicas and lists nothing more; a
 * client's request then is held and answered; a step to six concurrent clients scales it up; after the load it goes
 * back to 0. The clients loop through all of it and count every answer that is not the service's: none. Through
 * the localnet's gateway, then through `deployment serve`'s own (a process of its own on the same localnet), INFINITE
 * and SIMPLE-EXTEND, then with two of them on one PostgreSQL, the clients at the gateway of the one that does not
 * hold the lease.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {once} from 'node:events'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {PublicKey} from '@solana/web3.js'
import pg from 'pg'

import {
  api,
  createDeployment,
  deploymentEvents,
  deploymentJobs,
  jobsPaidBy,
  type ServeProcess,
  serving,
  spawnServe,
} from '../../helpers/deployments.js'
import {freshDatabase} from '../../helpers/deployment-stores-postgres.js'
import {eventually} from '../../helpers/eventually.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {gatewayGet} from '../../helpers/node.js'
import {requirePodman, TEST_IMAGE} from '../../helpers/podman.js'
import {DATABASE_URL_ENV} from '../../support/env.js'

/** A service whose /cgi-bin/slow answers its job's address after a second: requests stay in flight that long. */
const SLOW_JOB = {
  version: '0.1',
  type: 'container',
  ops: [
    {
      id: 'web',
      type: 'container/run',
      args: {
        image: TEST_IMAGE,
        cmd:
          'mkdir -p /tmp/w/cgi-bin && echo ok > /tmp/w/index.html && ' +
          // busybox httpd passes a CGI's head on as written: its lines end in CRLF.
          `printf '#!/bin/sh\\nsleep 1\\nprintf "Content-Type: text/plain\\\\r\\\\n\\\\r\\\\n"\\necho %%global.job%%\\n' > /tmp/w/cgi-bin/slow && ` +
          'chmod +x /tmp/w/cgi-bin/slow && exec httpd -f -p 8080 -h /tmp/w',
        expose: 8080,
      },
    },
  ],
}

describe('autoscaling from zero on the localnet (podman, 3 nodes)', function () {
  this.timeout(600_000)
  requirePodman()
  const t = useLocalnet({node: {gatewayPort: 0, pull: 'never', healthIntervalMs: 200, gpus: 0, nodes: 3}})
  const running: ServeProcess[] = []
  let dir: string
  before(() => (dir = tempDir('gpunet-autoscale-zero-')))
  after(() => {
    for (const m of running) if (m.child.exitCode === null) m.child.kill('SIGTERM')
    removeDir(dir)
  })

  /** The deployment's replica count and its open jobs, as its manager at `url` has them. */
  async function state(url: string, id: string): Promise<{replicas: number; open: number}> {
    const {body} = await api(url, t.wallet, 'GET', `/api/deployments/${id}`)
    const jobs = await deploymentJobs(url, t.wallet, id)
    return {replicas: body.replicas, open: jobs.filter((j) => j.state === 'RUNNING' || j.state === 'QUEUED').length}
  }

  /** Clients each looping GETs of the stable URL's slow page until stopped; every answer not the service's counts. */
  function clients(stable: string, n: number) {
    let on = true
    let answered = 0
    const failures: string[] = []
    const loops = Array.from({length: n}, async () => {
      while (on) {
        const answer = await gatewayGet(`${stable}cgi-bin/slow`).catch((error: Error) => ({
          status: 0,
          body: error.message,
        }))
        if (answer.status === 200 && answer.body.trim().length > 30) answered++
        else failures.push(`${answer.status} ${answer.body.slice(0, 200)}`)
      }
    })
    return {
      answered: () => answered,
      failures,
      stop: async () => {
        on = false
        await Promise.all(loops)
      },
    }
  }

  /** The whole scenario against the manager at `url`; the clients go to `stableOf(id)`, once it is started. */
  async function fromZeroAndBack(
    url: string,
    stableOf: (id: string) => string | Promise<string>,
    strategy = 'INFINITE',
  ): Promise<void> {
    const d = await createDeployment(url, t.wallet, {
      job_definition: SLOW_JOB,
      strategy,
      replicas: 1,
      timeout: 60,
      time_scale: 10,
      autoscale: {min_replicas: 0, max_replicas: 3, target_concurrency: 2, scale_down_after: 10},
    })
    const vault = new PublicKey(d.vault)
    t.ln.node.fund(vault, {lamports: 200_000_000n, tokens: 1_000_000n})
    assert.equal((await api(url, t.wallet, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
    const stable = await stableOf(d.id)
    try {
      // Idle: down to 0 replicas, no job open; then nothing more listed over a dozen of its polls.
      await eventually('idle at 0 replicas', 120_000, async () => {
        const now = await state(url, d.id)
        return now.replicas === 0 && now.open === 0 ? true : undefined
      })
      const listed = (await jobsPaidBy(t, vault)).size
      await sleep(6000)
      assert.equal((await jobsPaidBy(t, vault)).size, listed, 'nothing listed while idle at 0')
      assert.deepEqual(await state(url, d.id), {replicas: 0, open: 0})

      // One client: its first request is held while a replica starts, then answered.
      const one = clients(stable, 1)
      await eventually('the first request answered', 150_000, async () =>
        one.answered() > 0 ? true : undefined,
      ).catch(async (error: Error) => {
        const events = await deploymentEvents(url, t.wallet, d.id)
        throw new Error(
          `${error.message}: ${JSON.stringify({state: await state(url, d.id), failures: one.failures.slice(0, 3), events: events.slice(-8).map((e) => `${e.type}: ${e.message}`)})}`,
        )
      })
      // A step to six concurrent clients (three replicas' worth at 2 each): scaled up.
      const five = clients(stable, 5)
      await eventually('scaled up to 2 replicas or more', 150_000, async () => {
        const now = await state(url, d.id)
        return now.replicas >= 2 ? true : undefined
      })
      await eventually('requests answered by more than one replica', 150_000, async () => {
        const jobs = new Set<string>()
        for (let i = 0; i < 6; i++) jobs.add((await gatewayGet(`${stable}cgi-bin/slow`)).body.trim())
        return jobs.size >= 2 ? true : undefined
      })
      await five.stop()
      await one.stop()
      assert.deepEqual([...one.failures, ...five.failures], [], 'every request answered by the service')
      assert.ok(one.answered() + five.answered() > 10)

      // After the load: back to 0.
      await eventually('back at 0 replicas', 180_000, async () => {
        const now = await state(url, d.id)
        return now.replicas === 0 && now.open === 0 ? true : undefined
      })
    } finally {
      await api(url, t.wallet, 'POST', `/api/deployments/${d.id}/stop`)
    }
  }

  it("through the localnet's gateway: idle at 0, held then answered, scaled up, back to 0, no failure", async () => {
    const gateway = t.ln.agent!.gateway
    await fromZeroAndBack(t.ln.runtime.deploymentManager!, (id) => gateway.deploymentUrl(id))
  })

  it("through deployment serve's own gateway, in a process of its own", async () => {
    const manager = await serving(spawnServe(t, dir, join(dir, 'serve')))
    running.push(manager)
    await fromZeroAndBack(manager.url, (id) => manager.document.stableUrls.replace('<deployment>', id))
  })

  it("a SIMPLE-EXTEND deployment through deployment serve's gateway: its replicas probed as INFINITE's are", async () => {
    // serve's gateway calls a replica ready once its manager's probe saw it serve, which only INFINITE's watch ran.
    const manager = await serving(spawnServe(t, dir, join(dir, 'serve-extend')))
    running.push(manager)
    await fromZeroAndBack(manager.url, (id) => manager.document.stableUrls.replace('<deployment>', id), 'SIMPLE-EXTEND')
  })

  it('with two deployment serve on one PostgreSQL: the clients at the one not holding the lease, the other decides', async function () {
    if (!process.env[DATABASE_URL_ENV]) {
      if (process.env.CI === 'true') throw new Error(`${DATABASE_URL_ENV} is required under CI=true`)
      this.skip()
    }
    const database = await freshDatabase()
    const keyFile = join(dir, 'shared-vaults.key')
    writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, {mode: 0o600})
    const env = {GPUNET_MANAGER_DATABASE_URL: database.url, GPUNET_MANAGER_VAULT_KEY_FILE: keyFile}
    const managers = [
      await serving(spawnServe(t, dir, join(dir, 'pg-a'), undefined, env)),
      await serving(spawnServe(t, dir, join(dir, 'pg-b'), undefined, env)),
    ]
    running.push(...managers)
    const client = new pg.Client({connectionString: database.url})
    await client.connect()
    try {
      await fromZeroAndBack(managers[0]!.url, async (id) => {
        // The holder's name starts with its host and pid (manager-lease.ts): the clients go to the other's gateway,
        // so every figure the deciding manager reads of them comes through the store.
        const holder = await eventually('the lease taken', 30_000, async () => {
          const found = await client.query<{holder: string}>('SELECT holder FROM leases WHERE deployment = $1', [id])
          return found.rows[0]?.holder
        })
        const other = managers.find((m) => !holder.includes(`:${m.child.pid}:`))!
        assert.notEqual(other, undefined)
        assert.equal(managers.filter((m) => holder.includes(`:${m.child.pid}:`)).length, 1, holder)
        return other.document.stableUrls.replace('<deployment>', id)
      })
    } finally {
      await client.end()
      for (const m of managers) m.child.kill('SIGTERM')
      for (const m of managers) if (m.child.exitCode === null) await once(m.child, 'exit')
      await database.drop()
    }
  })
})
