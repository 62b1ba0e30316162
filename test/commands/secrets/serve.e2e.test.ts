import pg from 'pg'
import {strict as assert} from 'node:assert'
import {type ChildProcess, spawn} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {once} from 'node:events'
import {stat} from 'node:fs/promises'
import {join} from 'node:path'

import {BIN, runCli} from '../../helpers/cli.js'
import {type Adapter, call, forEachAdapter, login, newWallet, sqliteAdapter, tempDir} from '../../helpers/secrets.js'
import {postgresAdapter} from '../../helpers/secrets-postgres.js'
import {DATABASE_URL_ENV} from '../../support/env.js'
import {startStandinPinning, startStandinRpc, type StandinPinning, type StandinRpc} from '../../helpers/standin.js'

/** A devnet stand-in for every server here, so none of them starts a localnet; started on first use. */
let standins: Promise<{rpc: StandinRpc; gateway: StandinPinning}> | undefined
async function networkArgs(): Promise<string[]> {
  // Only the pinning stand-in's gateway is used: the service reads definitions and never pins.
  standins ??= (async () => ({rpc: await startStandinRpc(), gateway: await startStandinPinning('not-used')}))()
  const {rpc, gateway} = await standins
  return ['--network', 'devnet', '--rpc', rpc.url, '--ipfs-gateway', gateway.url]
}
after(async () => {
  if (!standins) return
  const {rpc, gateway} = await standins
  await rpc.close()
  await gateway.close()
})

interface Server {
  child: ChildProcess
  url: string
  stderr: () => string
}

/** `gpunet secrets serve` in a child process, resolved once it prints its URL. */
async function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const child = spawn(process.execPath, [BIN, 'secrets', 'serve', '--port', '0', ...(await networkArgs()), ...args], {
    env: {...process.env, NO_COLOR: '1', ...env},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
      const match = /listening on (http:\/\/\S+)/.exec(stdout)
      if (match) resolve(match[1] as string)
    })
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)))
  })
  return {child, url, stderr: () => stderr}
}

async function stop(server: Server, signal: NodeJS.Signals): Promise<number | null> {
  if (server.child.exitCode !== null) return server.child.exitCode
  const exited = once(server.child, 'exit')
  server.child.kill(signal)
  const [code] = await exited
  return code as number | null
}

/** The storage flags for a fresh store of `adapter`: a data folder, plus a database of its own for PostgreSQL. */
async function freshStore(adapter: Adapter): Promise<{args: string[]; cleanup: () => Promise<void>; dataDir: string}> {
  const {dir, remove} = await tempDir()
  if (adapter.name === 'SQLite') return {args: ['--data-dir', dir], cleanup: remove, dataDir: dir}
  const admin = new pg.Client({connectionString: process.env[DATABASE_URL_ENV]})
  await admin.connect()
  const database = `gpunet_serve_${randomBytes(6).toString('hex')}`
  await admin.query(`CREATE DATABASE ${database}`)
  const url = new URL(process.env[DATABASE_URL_ENV] as string)
  url.pathname = `/${database}`
  return {
    args: ['--data-dir', dir, '--database-url', url.toString()],
    dataDir: dir,
    async cleanup() {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      await admin.end()
      await remove()
    },
  }
}

forEachAdapter(
  'gpunet secrets serve',
  (adapter) => {
    it('keeps every acknowledged write through kill -9 and a restart', async function () {
      this.timeout(60_000)
      const store = await freshStore(adapter)
      try {
        const first = await serve(store.args)
        const wallet = newWallet()
        const token = await login(first.url, wallet)
        const acknowledged = new Map<string, string>()
        let n = 0
        const writer = async () => {
          for (;;) {
            const i = n++
            const name = `K${i % 150}`
            const value = `write-${i}-${randomBytes(4).toString('hex')}`
            try {
              const answer = await call(first.url, 'POST', '/secrets', {token, params: {secrets: {[name]: value}}})
              if (answer.status !== 200) throw new Error(`write answered ${answer.status}`)
              acknowledged.set(name, value)
            } catch {
              return // the server is gone
            }
          }
        }
        const writers = Array.from({length: 6}, writer)
        while (acknowledged.size < 100) await new Promise((resolve) => setTimeout(resolve, 10))
        assert.equal(await stop(first, 'SIGKILL'), null)
        await Promise.all(writers)

        const second = await serve(store.args)
        try {
          const stored = (await call(second.url, 'GET', '/secrets', {token: await login(second.url, wallet)}))
            .body as Record<string, string>
          for (const [name, value] of acknowledged)
            assert.equal(stored[name], value, `${name} lost or stale after kill -9`)
        } finally {
          assert.equal(await stop(second, 'SIGTERM'), 0)
        }
        if (adapter.name === 'SQLite')
          assert.equal((await stat(join(store.dataDir, 'secrets.key'))).mode & 0o777, 0o600)
      } finally {
        await store.cleanup()
      }
    })
  },
  [sqliteAdapter, postgresAdapter],
)

describe('gpunet secrets serve: two processes on one SQLite file', () => {
  it('answers 320 concurrent writes split between them without a 500, and loses none', async function () {
    this.timeout(120_000)
    const store = await freshStore({name: 'SQLite'} as Adapter)
    const servers = [await serve(store.args), await serve(store.args)]
    try {
      const wallets = Array.from({length: 32}, newWallet)
      // Logins write too (each signature is recorded): half of them on each process.
      const tokens = await Promise.all(wallets.map((w, i) => login((servers[i % 2] as Server).url, w)))
      const statuses = await Promise.all(
        Array.from({length: 320}, (_, i) =>
          call((servers[i % 2] as Server).url, 'POST', '/secrets', {
            token: tokens[i % 32],
            params: {secrets: {[`K${i}`]: `v${i}`}},
          }).then((answer) => answer.status),
        ),
      )
      assert.deepEqual(
        statuses.filter((status) => status !== 200),
        [],
      )
      for (const [w, wallet] of wallets.entries()) {
        const token = await login((servers[w % 2] as Server).url, wallet)
        const stored = (await call((servers[(w + 1) % 2] as Server).url, 'GET', '/secrets', {token})).body
        const expected = Object.fromEntries(
          Array.from({length: 10}, (_, k) => 32 * k + w).map((i) => [`K${i}`, `v${i}`]),
        )
        assert.deepEqual(stored, expected)
      }
    } finally {
      for (const server of servers) await stop(server, 'SIGTERM')
      await store.cleanup()
    }
  })
})

describe('gpunet secrets serve (command)', () => {
  it('prints its URL on stdout, logs requests on stderr and stops cleanly on SIGTERM', async () => {
    const {dir, remove} = await tempDir()
    try {
      const server = await serve(['--data-dir', dir])
      assert.equal((await call(server.url, 'GET', '/health')).status, 200)
      assert.equal(await stop(server, 'SIGTERM'), 0)
      assert.match(server.stderr(), /Storage: SQLite .*secrets\.db/)
      assert.match(server.stderr(), /GET \/health 200/)
    } finally {
      await remove()
    }
  })

  it('exits 2 with a hint when the port is taken', async () => {
    const {dir, remove} = await tempDir()
    const server = await serve(['--data-dir', dir])
    try {
      const port = new URL(server.url).port
      const result = await runCli(['secrets', 'serve', '--port', port, '--data-dir', dir, ...(await networkArgs())])
      assert.equal(result.code, 2)
      assert.equal(result.stdout, '')
      assert.match(result.stderr, /cannot listen on 127\.0\.0\.1:\d+/)
      assert.match(result.stderr, /Hint: choose another --port/)
    } finally {
      await stop(server, 'SIGTERM')
      await remove()
    }
  })

  it('exits 5 naming the address (never the password) when its PostgreSQL does not answer', async () => {
    const {dir, remove} = await tempDir()
    const closed = (await import('node:net')).createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as {port: number}).port
    await new Promise((resolve) => closed.close(resolve))
    try {
      const url = `postgres://gpunet:hunter2@127.0.0.1:${port}/secrets`
      const args = [
        'secrets',
        'serve',
        '--port',
        '0',
        '--data-dir',
        dir,
        '--database-url',
        url,
        ...(await networkArgs()),
      ]
      const text = await runCli(args)
      assert.equal(text.code, 5, text.stderr)
      assert.match(
        text.stderr,
        new RegExp(
          `^Error: cannot reach PostgreSQL at postgres://gpunet:\\*\\*\\*@127\\.0\\.0\\.1:${port}/secrets: `,
          'm',
        ),
      )
      assert.match(text.stderr, /^Hint: check that the database server runs/m)
      assert.doesNotMatch(text.stderr + text.stdout, /hunter2|unexpected/)
      const json = await runCli([...args, '--json'])
      assert.equal(json.code, 5)
      assert.equal((JSON.parse(json.stdout) as {error: {code: string}}).error.code, 'database_unreachable')
    } finally {
      await remove()
    }
  })

  it('on a live PostgreSQL, an unknown role is exit 6 and an unknown database exit 5, each naming the URL', async function () {
    const live = process.env[DATABASE_URL_ENV]
    if (!live) {
      if (process.env.CI) assert.fail(`${DATABASE_URL_ENV} is not set, and CI sets it`)
      return this.skip()
    }
    const {dir, remove} = await tempDir()
    try {
      const serveWith = async (url: URL) =>
        runCli([
          'secrets',
          'serve',
          '--port',
          '0',
          '--data-dir',
          dir,
          '--database-url',
          url.toString(),
          '--json',
          ...(await networkArgs()),
        ])
      const role = new URL(live)
      role.username = 'gpunet_no_such_role'
      role.password = 'hunter2'
      const denied = await serveWith(role)
      assert.equal(denied.code, 6, denied.stdout)
      const deniedError = (JSON.parse(denied.stdout) as {error: {code: string; message: string; hint: string}}).error
      assert.equal(deniedError.code, 'database_denied')
      assert.match(
        deniedError.message,
        /^PostgreSQL at postgres:\/\/gpunet_no_such_role:\*\*\*@[^ ]+ refused the login: /,
      )
      assert.equal(deniedError.hint, 'check the user and password in --database-url')
      assert.doesNotMatch(denied.stdout + denied.stderr, /hunter2/)
      const database = new URL(live)
      database.pathname = '/gpunet_no_such_database'
      const missing = await serveWith(database)
      assert.equal(missing.code, 5, missing.stdout)
      const missingError = (JSON.parse(missing.stdout) as {error: {code: string; message: string}}).error
      assert.equal(missingError.code, 'database_unreachable')
      assert.match(missingError.message, /^cannot reach PostgreSQL at postgres:\/\/\S+\/gpunet_no_such_database: /)
    } finally {
      await remove()
    }
  })

  it('refuses a key file other users can read', async () => {
    const {dir, remove} = await tempDir()
    try {
      const {writeFile} = await import('node:fs/promises')
      await writeFile(join(dir, 'secrets.key'), `${randomBytes(32).toString('base64')}\n`, {mode: 0o644})
      const result = await runCli(['secrets', 'serve', '--port', '0', '--data-dir', dir, ...(await networkArgs())])
      assert.equal(result.code, 3)
      assert.match(result.stderr, /readable by other users/)
      assert.match(result.stderr, /chmod 600/)
    } finally {
      await remove()
    }
  })
})
