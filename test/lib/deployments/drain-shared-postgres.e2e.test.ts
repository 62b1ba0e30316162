/**
 * Draining through the store, end to end: two deployment managers on one PostgreSQL, each with its own gateway (in
 * this process), in front of a two-replica deployment on the localnet (podman). A client's slow requests are in
 * flight to both replicas through the gateway of the manager that does NOT hold the deployment's lease while the
 * lease holder scales the deployment down: the replica it stops is drained first, so every slow request is answered
 * by its replica, and the other gateway sends no new request to the draining one. (Before draining went through the
 * store, the other gateway kept routing to it, and its requests in flight were cut when the job stopped.)
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {PublicKey} from '@solana/web3.js'
import pg from 'pg'

import {drainSeenAt} from '../../../src/lib/deployments/draining.js'
import {type RunningManager, startDeploymentManager} from '../../../src/lib/deployments/manager.js'
import {api, createDeployment, localnetClient} from '../../helpers/deployments.js'
import {freshDatabase} from '../../helpers/deployment-stores-postgres.js'
import {eventually} from '../../helpers/eventually.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {gatewayGet} from '../../helpers/node.js'
import {requirePodman, TEST_IMAGE} from '../../helpers/podman.js'
import {DATABASE_URL_ENV} from '../../support/env.js'

/** How long the service's /cgi-bin/slow takes: the requests in flight while the replica is drained. */
const SLOW_S = 20

/** A service whose /cgi-bin/job answers its job's address at once, and /cgi-bin/slow after SLOW_S seconds. */
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
          `printf '#!/bin/sh\\nprintf "Content-Type: text/plain\\\\r\\\\n\\\\r\\\\n"\\necho %%global.job%%\\n' > /tmp/w/cgi-bin/job && ` +
          `printf '#!/bin/sh\\nsleep ${SLOW_S}\\nprintf "Content-Type: text/plain\\\\r\\\\n\\\\r\\\\n"\\necho %%global.job%%\\n' > /tmp/w/cgi-bin/slow && ` +
          'chmod +x /tmp/w/cgi-bin/job /tmp/w/cgi-bin/slow && exec httpd -f -p 8080 -h /tmp/w',
        expose: 8080,
      },
    },
  ],
}

describe('draining through the store: two managers on one PostgreSQL (podman)', function () {
  this.timeout(600_000)
  requirePodman()
  const t = useLocalnet({node: {gatewayPort: 0, pull: 'never', healthIntervalMs: 200, gpus: 0, nodes: 3}})
  let dir: string
  let database: {url: string; drop: () => Promise<void>} | undefined
  const managers: RunningManager[] = []
  before(function () {
    if (!process.env[DATABASE_URL_ENV]) {
      if (process.env.CI === 'true') throw new Error(`${DATABASE_URL_ENV} is required under CI=true`)
      this.skip()
    }
    dir = tempDir('gpunet-drain-shared-')
  })
  after(async () => {
    for (const m of managers) await m.close().catch(() => {})
    await database?.drop()
    if (dir) removeDir(dir)
  })

  it("a slow request through the other manager's gateway is answered, and nothing new goes to the draining replica", async () => {
    database = await freshDatabase()
    const keyFile = join(dir, 'shared-vaults.key')
    writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, {mode: 0o600})
    // The replicas' service URLs are the localnet node gateway's, as `deployment serve` finds them on the localnet.
    const net = localnetClient(t, {}, true)
    for (const name of ['drain-a', 'drain-b'])
      managers.push(
        await startDeploymentManager({
          dataDir: join(dir, name),
          databaseUrl: database.url,
          vaultKeyFile: keyFile,
          holder: name,
          net,
          network: 'localnet',
          port: 0,
          gatewayPort: 0,
          drainTimeoutMs: 120_000,
        }),
      )
    const client = new pg.Client({connectionString: database.url})
    await client.connect()
    const url = managers[0]!.url
    const d = await createDeployment(url, t.wallet, {
      job_definition: SLOW_JOB,
      strategy: 'INFINITE',
      replicas: 2,
      timeout: 60,
      time_scale: 2,
    })
    t.ln.node.fund(new PublicKey(d.vault), {lamports: 200_000_000n, tokens: 1_000_000n})
    try {
      assert.equal((await api(url, t.wallet, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
      const holder = await eventually('the lease taken', 60_000, async () => {
        const found = await client.query<{holder: string}>('SELECT holder FROM leases WHERE deployment = $1', [d.id])
        return found.rows[0]?.holder
      })
      const deciding = managers.find((m) => m.context.holder === holder)!
      const other = managers.find((m) => m.context.holder !== holder)!
      assert.ok(deciding && other && deciding !== other, holder)
      // Every request of the client goes through the gateway of the manager that does not drain.
      const stable = other.gateway!.deploymentUrl(d.id)
      const jobOf = async (path: string) => {
        const answer = await gatewayGet(`${stable}cgi-bin/${path}`).catch((error: Error) => ({
          status: 0,
          body: error.message,
        }))
        return answer.status === 200 && answer.body.trim().length > 30
          ? answer.body.trim()
          : `failed: ${answer.status} ${answer.body.slice(0, 200)}`
      }
      let seen = new Set<string>()
      const replicas = await eventually('both replicas answer through the other gateway', 240_000, async () => {
        seen = new Set<string>()
        for (let i = 0; i < 8; i++) seen.add(await jobOf('job'))
        return seen.size === 2 && [...seen].every((j) => !j.startsWith('failed')) ? seen : undefined
      }).catch(async (error: Error) => {
        const jobs = await client.query('SELECT job, state, tunnel FROM jobs WHERE deployment = $1', [d.id])
        throw new Error(`${error.message}: ${JSON.stringify({seen: [...seen], jobs: jobs.rows})}`)
      })

      // Slow requests in flight to both replicas, through the other gateway.
      const slow: Promise<string>[] = []
      await eventually(
        'a slow request in flight to each replica',
        30_000,
        async () => {
          if (slow.length < 8) slow.push(jobOf('slow'))
          const inFlight = other.gateway!.gateway.jobsInFlight()
          return [...replicas].every((job) => (inFlight[job.toLowerCase()] ?? 0) > 0) ? true : undefined
        },
        100,
      )
      const inFlightAtStart = other.gateway!.gateway.jobsInFlight()

      // The lease holder scales down: one replica drained, then stopped.
      const scaled = await api(url, t.wallet, 'PATCH', `/api/deployments/${d.id}/update-replica-count`, {replicas: 1})
      assert.equal(scaled.status, 200, JSON.stringify(scaled.body))
      const drained = await eventually(
        'a replica marked draining in the store',
        60_000,
        async () => {
          const found = await client.query<{job: string; draining_at: string}>(
            'SELECT job, draining_at FROM jobs WHERE deployment = $1 AND draining_at IS NOT NULL',
            [d.id],
          )
          return found.rows[0]
        },
        50,
      )
      assert.ok(replicas.has(drained.job), drained.job)
      const kept = [...replicas].find((job) => job !== drained.job)!
      // Once the other gateway's rows are read again (drainSeenAt), it sends the draining replica nothing new.
      await sleep(drainSeenAt(Number(drained.draining_at)) - Number(drained.draining_at) + 200)
      const meanwhile: string[] = []
      for (let i = 0; i < 10; i++) meanwhile.push(await jobOf('job'))
      assert.deepEqual(meanwhile, Array(10).fill(kept), 'new requests go to the replica kept only')
      const stillInFlight = other.gateway!.gateway.jobsInFlight()[drained.job.toLowerCase()] ?? 0
      assert.ok(
        stillInFlight > 0,
        `the slow requests to ${drained.job} were still in flight: ${JSON.stringify(inFlightAtStart)}`,
      )

      // Every slow request answered by its replica, the drained one's included: the stop waited for them.
      const answers = await Promise.all(slow)
      assert.deepEqual(
        answers.filter((a) => !replicas.has(a)),
        [],
        `every slow request answered by a replica: ${JSON.stringify(answers)}`,
      )
      assert.ok(answers.includes(drained.job))
      await eventually('the drained replica stopped', 120_000, async () => {
        const found = await client.query<{state: string}>('SELECT state FROM jobs WHERE job = $1', [drained.job])
        return ['RUNNING', 'QUEUED'].includes(found.rows[0]!.state) ? undefined : true
      })
      assert.equal(await jobOf('job'), kept)
    } finally {
      await api(url, t.wallet, 'POST', `/api/deployments/${d.id}/stop`).catch(() => {})
      await client.end()
    }
  })
})
