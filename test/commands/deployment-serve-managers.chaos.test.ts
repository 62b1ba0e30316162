/**
 * Several managers on one PostgreSQL: three `gpunet deployment serve` processes share a fresh database and one vault
 * key, and keep 10 deployments on a real localnet while they are SIGKILLed in turn at each crash point of paying
 * (crash-points.ts). Afterwards every deployment has its replica count, the chain shows no job listed twice and no
 * extension paid twice, and each event is recorded once. Then the faults: a manager with another vault key refused
 * (exit 3), and PostgreSQL stopped under a manager (the API answers 503 store_unavailable) and started again (it
 * catches up).
 */
import {strict as assert} from 'node:assert'
import {execFileSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {once} from 'node:events'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Keypair, PublicKey} from '@solana/web3.js'

import {CRASH_ENV, type CrashPoint} from '../../src/lib/deployments/crash-points.js'
import {
  api,
  createDeployment,
  deploymentEvents,
  deploymentJobs,
  jobsPaidBy,
  nodeTakesNextJob,
  statusWhen,
  tasksWhen,
  type Body,
  deploymentTasks,
  serving,
  spawnServe,
  type ServeProcess,
} from '../helpers/deployments.js'
import {freshDatabase} from '../helpers/deployment-stores-postgres.js'
import {useLocalnet} from '../helpers/localnet.js'
import {removeDir, tempDir} from '../helpers/files.js'
import {DATABASE_URL_ENV} from '../support/env.js'
import {freePort} from '../helpers/ports.js'

type Manager = ServeProcess

/** PostgreSQL's programs, as .ci/run finds them; undefined when none is installed. */
function pgBin(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).sort((a, b) => Number(a) - Number(b))
  const bin = versions.length ? join(root, versions.at(-1)!, 'bin') : undefined
  return bin && existsSync(join(bin, 'initdb')) ? bin : undefined
}

/** A throwaway PostgreSQL cluster in `dir` on its own port, to stop and start under a manager. */
function throwawayCluster(bin: string, dir: string, port: number) {
  const asPostgres = (program: string, args: string[]) => {
    const command = process.getuid?.() === 0 ? 'runuser' : join(bin, program)
    const words = process.getuid?.() === 0 ? ['-u', 'postgres', '--', join(bin, program), ...args] : args
    execFileSync(command, words, {stdio: 'pipe'})
  }
  const data = join(dir, 'data')
  mkdirSync(data, {recursive: true, mode: 0o700})
  // The server runs as postgres, which owns its data directory (as .ci/run does).
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres', dir])
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres'])
  const start = () =>
    asPostgres('pg_ctl', [
      '-D',
      data,
      '-w',
      '-l',
      join(data, 'server.log'),
      '-o',
      `-p ${port} -k ${data} -h 127.0.0.1`,
      'start',
    ])
  const stop = () => asPostgres('pg_ctl', ['-D', data, '-w', '-m', 'immediate', 'stop'])
  return {url: `postgres://postgres@127.0.0.1:${port}/postgres`, start, stop}
}

describe('deployment serve: three managers on one PostgreSQL', function () {
  this.timeout(600_000)
  const t = useLocalnet()
  const running: Manager[] = []
  let dir: string
  let keyFile: string

  before(function () {
    if (!process.env[DATABASE_URL_ENV]) {
      if (process.env.CI === 'true') throw new Error(`${DATABASE_URL_ENV} is required under CI=true`)
      process.stderr.write(`\n!!! SKIPPING the three-manager suite: ${DATABASE_URL_ENV} is not set.\n`)
      this.skip()
    }
    dir = tempDir('gpunet-managers-')
    keyFile = join(dir, 'shared-vaults.key')
    writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, {mode: 0o600})
  })
  after(async () => {
    for (const m of running) if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGTERM')
    for (const m of running) if (m.child.exitCode === null && m.child.signalCode === null) await once(m.child, 'exit')
    if (dir) removeDir(dir)
  })

  /** Starts a manager on `databaseUrl`; answers once it listens. */
  async function serve(name: string, databaseUrl: string, crashAt?: CrashPoint): Promise<Manager> {
    const child = spawnServe(t, dir, join(dir, name), crashAt, {
      GPUNET_MANAGER_DATABASE_URL: databaseUrl,
      GPUNET_MANAGER_VAULT_KEY_FILE: keyFile,
    })
    const manager = await serving(child)
    running.push(manager)
    return manager
  }

  const alive = (manager: Manager) => manager.child.exitCode === null && manager.child.signalCode === null

  async function killedAt(manager: Manager, point: CrashPoint): Promise<void> {
    if (alive(manager)) {
      const timer = setTimeout(() => manager.child.kill('SIGTERM'), 120_000)
      await once(manager.child, 'exit')
      clearTimeout(timer)
    }
    assert.equal(manager.child.signalCode, 'SIGKILL', manager.stderr())
    assert.match(manager.stderr(), new RegExp(`${CRASH_ENV}=${point}: killing`))
  }

  async function stopped(manager: Manager): Promise<void> {
    if (manager.child.exitCode !== null || manager.child.signalCode !== null) return
    manager.child.kill('SIGTERM')
    await once(manager.child, 'exit')
  }

  it('keeps 10 deployments through managers killed at each crash point: replicas met, nothing paid twice', async () => {
    const db = await freshDatabase()
    try {
      const owner = t.wallet
      let steady = await serve('m3', db.url)
      // Jobs of 15 s on chain, extended by 15 s 1.5 s before their end; 1 or 2 replicas.
      const deployments: Body[] = []
      for (let i = 0; i < 10; i++) {
        const d = await createDeployment(steady.url, owner, {
          name: `svc${i}`,
          replicas: 1 + (i % 2),
          timeout: 10,
          time_scale: 40,
        })
        t.ln.node.fund(new PublicKey(d.vault), {lamports: 100_000_000n, tokens: 500_000n})
        deployments.push(d)
      }
      // Only the managers to kill work while they live, so each surely reaches its crash point.
      await stopped(steady)
      const listSaved = await serve('m1', db.url, 'list-saved')
      const listSent = await serve('m2', db.url, 'list-sent')
      for (const d of deployments) {
        // Started through whichever manager still answers; once both are dead, through the steady one again.
        let answered = false
        for (const m of [listSaved, listSent]) {
          const started = await api(m.url, owner, 'POST', `/api/deployments/${d.id}/start`).catch(() => null)
          if (started) {
            assert.equal(started.status, 200, JSON.stringify(started.body))
            answered = true
            break
          }
        }
        if (answered) continue
        if (!alive(steady)) steady = await serve('m3', db.url)
        assert.equal((await api(steady.url, owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
      }
      await killedAt(listSaved, 'list-saved')
      await killedAt(listSent, 'list-sent')
      if (!alive(steady)) steady = await serve('m3', db.url)

      // The killed managers' leases run out and the steady one settles what they left in flight.
      const replicas = (d: Body) => d.replicas as number
      for (const d of deployments) {
        await tasksWhen(
          steady.url,
          owner,
          d.id as string,
          (tasks) =>
            tasks.filter((x) => x.task === 'LIST' && x.status === 'DONE').length >= 1 &&
            tasks.every((x) => x.task !== 'LIST' || x.status === 'DONE'),
          60_000,
        )
      }
      // The extensions, again by the managers to kill alone.
      await stopped(steady)
      const extendSaved = await serve('m1', db.url, 'extend-saved')
      const extendSent = await serve('m2', db.url, 'extend-sent')
      // Nodes take the jobs: running jobs are extended before their end.
      const listed = deployments.reduce((n, d) => n + replicas(d), 0)
      for (let i = 0; i < listed; i++) await nodeTakesNextJob(t)
      await killedAt(extendSaved, 'extend-saved')
      await killedAt(extendSent, 'extend-sent')
      steady = await serve('m3', db.url)
      const again = [await serve('m1', db.url), await serve('m2', db.url)]

      // Every deployment has its replicas, each listed once: the chain and the store agree.
      for (const d of deployments) {
        const id = d.id as string
        await tasksWhen(
          steady.url,
          owner,
          id,
          (tasks) =>
            tasks.some((x) => x.task === 'EXTEND' && x.status === 'DONE' && x.tx) &&
            tasks.every((x) => x.status === 'DONE' || x.task === 'EXTEND'),
          60_000,
        )
        const onChain = await jobsPaidBy(t, new PublicKey(d.vault as string))
        const rows = await deploymentJobs(steady.url, owner, id)
        assert.equal(
          onChain.size,
          replicas(d),
          `deployment ${id}: jobs paid by its vault ${[...onChain.keys()].join(', ')}`,
        )
        assert.deepEqual(rows.map((r) => r.job).sort(), [...onChain.keys()].sort())
      }
      for (const d of deployments) await api(steady.url, owner, 'POST', `/api/deployments/${d.id}/stop`)
      for (const d of deployments) await statusWhen(steady.url, owner, d.id as string, 'STOPPED', 60_000)

      for (const d of deployments) {
        const id = d.id as string
        const tasks = await deploymentTasks(steady.url, owner, id)
        const events = await deploymentEvents(steady.url, owner, id)
        const jobs = await deploymentJobs(steady.url, owner, id)
        const listedEvents = events.filter((e) => e.type === 'JOB_LIST_CONFIRMED')
        assert.deepEqual(
          listedEvents.map((e) => e.tx).sort(),
          jobs.map((j) => j.tx).sort(),
          `deployment ${id}: one JOB_LIST_CONFIRMED per job listed`,
        )
        const extensions = tasks.filter((x) => x.task === 'EXTEND' && x.status === 'DONE' && x.tx)
        const extendEvents = events.filter((e) => e.type === 'JOB_EXTEND_SUCCESSFUL')
        assert.deepEqual(extendEvents.map((e) => e.tx).sort(), extensions.map((x) => x.tx).sort())
        assert.equal(new Set(extendEvents.map((e) => e.tx)).size, extendEvents.length, 'an extension recorded twice')
        // At rest, each extension recorded is paid once: each job's timeout grew by 15 s per extension, no more.
        for (const [address, account] of await jobsPaidBy(t, new PublicKey(d.vault as string))) {
          const paid = extensions.filter((x) => x.job === address).length
          assert.equal(account.timeout, 15n * BigInt(1 + paid), `job ${address}`)
        }
        assert.ok(
          tasks.every((x) => x.status === 'DONE'),
          JSON.stringify(tasks),
        )
      }
      for (const m of [steady, ...again]) await stopped(m)
    } finally {
      for (const m of running) await stopped(m)
      await db.drop()
    }
  })

  it("refuses a manager whose vault key is not the database's (exit 3), a revoked API key and another owner", async () => {
    const db = await freshDatabase()
    try {
      const first = await serve('k1', db.url)
      const other = join(dir, 'other.key')
      writeFileSync(other, `${randomBytes(32).toString('base64')}\n`, {mode: 0o600})
      const child = spawnServe(t, dir, join(dir, 'k2'), undefined, {
        GPUNET_MANAGER_DATABASE_URL: db.url,
        GPUNET_MANAGER_VAULT_KEY_FILE: other,
      })
      let output = ''
      child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d))
      // With --json the refusal is a JSON document on stdout.
      child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
      // 'close': the exit and the end of its output.
      const [code] = (await once(child, 'close')) as [number]
      assert.equal(code, 3, output)
      assert.match(output, /vault key in .*other\.key is not the key of PostgreSQL/)
      assert.match(output, /same key/)
      assert.ok(!output.includes('Error:') || !/at .*\.js:\d+/.test(output), 'a stack trace')

      // The same refusals as on SQLite: a revoked API key, another owner's deployment.
      const owner = t.wallet
      const d = await createDeployment(first.url, owner, {name: 'mine'})
      const made = await api<{id: string; key: string}>(first.url, owner, 'POST', '/api/api-keys', {name: 'ci'})
      assert.equal(made.status, 201, JSON.stringify(made.body))
      const byKey = () =>
        fetch(`${first.url}/api/deployments/${d.id}`, {headers: {authorization: `Bearer ${made.body.key}`}})
      assert.equal((await byKey()).status, 200)
      assert.equal((await api(first.url, owner, 'DELETE', `/api/api-keys/${made.body.id}`)).status, 204)
      const revoked = await byKey()
      assert.equal(revoked.status, 401)
      assert.equal(((await revoked.json()) as {error: {code: string}}).error.code, 'api_key_revoked')
      const stranger = Keypair.generate()
      assert.equal((await api(first.url, stranger, 'GET', `/api/deployments/${d.id}`)).status, 404)
      await stopped(first)
    } finally {
      for (const m of running) await stopped(m)
      await db.drop()
    }
  })

  it('answers 503 store_unavailable while PostgreSQL is down, loses no task, and catches up once it is back', async function () {
    const bin = pgBin()
    if (!bin) {
      if (process.env.CI === 'true') throw new Error('no PostgreSQL programs under /usr/lib/postgresql')
      this.skip()
    }
    const clusterDir = mkdtempSync(join(tmpdir(), 'gpunet-pg-'))
    const cluster = throwawayCluster(bin!, clusterDir, await freePort())
    cluster.start()
    try {
      const owner = t.wallet
      const manager = await serve('pg-down', cluster.url)
      const d = await createDeployment(manager.url, owner, {name: 'outage', replicas: 2, timeout: 10, time_scale: 40})
      t.ln.node.fund(new PublicKey(d.vault as string), {lamports: 100_000_000n, tokens: 500_000n})
      assert.equal((await api(manager.url, owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
      // Down right after the start: its LIST tasks wait in the database, whatever step they had reached.
      cluster.stop()
      const down = await api<{error: {code: string}}>(manager.url, owner, 'GET', `/api/deployments/${d.id}`)
      assert.equal(down.status, 503, JSON.stringify(down.body))
      assert.equal(down.body.error.code, 'store_unavailable')
      assert.equal((await api(manager.url, owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 503)
      // Down for several of the worker's polls: it keeps running and retrying.
      await new Promise((resolve) => setTimeout(resolve, 2000))
      assert.equal(manager.child.exitCode, null, manager.stderr())
      cluster.start()
      await tasksWhen(
        manager.url,
        owner,
        d.id as string,
        (tasks) => {
          const lists = tasks.filter((x) => x.task === 'LIST')
          return lists.length > 0 && lists.every((x) => x.status === 'DONE')
        },
        60_000,
      )
      const onChain = await jobsPaidBy(t, new PublicKey(d.vault as string))
      assert.equal(onChain.size, 2, 'each replica listed once')
      assert.deepEqual(
        (await deploymentJobs(manager.url, owner, d.id as string)).map((j) => j.job).sort(),
        [...onChain.keys()].sort(),
      )
      assert.equal((await api(manager.url, owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
      await statusWhen(manager.url, owner, d.id as string, 'STOPPED', 60_000)
      await stopped(manager)
    } finally {
      for (const m of running) await stopped(m)
      try {
        cluster.stop()
      } catch {
        // already stopped
      }
      removeDir(clusterDir)
    }
  })
})
