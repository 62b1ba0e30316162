/**
 * The SQLite storage at the edges the mutation run of the secrets service left open (issue 26): how long a write
 * waits for another process's lock, deletes and lone writes answered only once on disk, the health check, closing,
 * and the first table layout's migration. docs/development.md lists the survivors no test can tell apart.
 */
import {strict as assert} from 'node:assert'
import {existsSync, fdatasyncSync, statSync} from 'node:fs'
import {join} from 'node:path'

import {DEFAULT_LIMITS} from '../../../../src/lib/secrets/service/server.js'
import {type DataSync, openSqliteStorage} from '../../../../src/lib/secrets/service/sqlite.js'
import {StorageBusyError} from '../../../../src/lib/secrets/service/storage.js'
import {tempDir, writeFirstLayout} from '../../../helpers/secrets.js'
import {openSqlite} from '../../../../src/lib/sqlite/open.js'

const sealed = (name: string) => [{name, sealed: Buffer.from(`sealed-${name}`)}]

describe('SQLite secret storage: waits, flushes, health and layout', () => {
  let dir: string
  let remove: () => Promise<void>
  beforeEach(async () => {
    ;({dir, remove} = await tempDir())
  })
  afterEach(() => remove())

  it('gives up on a write lock another connection holds after three busy timeouts, not sooner nor later', async () => {
    const file = join(dir, 'secrets.db')
    const busyTimeoutMs = 400
    const storage = openSqliteStorage(file, {busyTimeoutMs})
    const other = openSqlite(file)
    other.exec('BEGIN IMMEDIATE')
    try {
      const started = performance.now()
      await assert.rejects(storage.put('owner', sealed('A'), DEFAULT_LIMITS), StorageBusyError)
      const waited = performance.now() - started
      // SQLite's busy handler sleeps the whole timeout in each of the three tries; a fourth would reach 1,600 ms.
      assert.ok(waited >= 3 * busyTimeoutMs, `answered busy after ${waited} ms`)
      assert.ok(waited < 3.5 * busyTimeoutMs, `answered busy after ${waited} ms`)
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    assert.deepEqual(await storage.list('owner'), [])
    await storage.close()
  })

  it('answers a delete only after an fdatasync of the WAL that holds it', async () => {
    const file = join(dir, 'secrets.db')
    const events: string[] = []
    const dataSync: DataSync = (fd) => {
      events.push('sync')
      fdatasyncSync(fd)
    }
    const storage = openSqliteStorage(file, {dataSync})
    await storage.put('owner', sealed('A'), DEFAULT_LIMITS)
    events.length = 0
    assert.equal(await storage.delete('owner', 'A').finally(() => events.push('answered')), true)
    assert.deepEqual(events, ['sync', 'answered'])
    assert.deepEqual(await storage.list('owner'), [])
    await storage.close()
  })

  it('answers a lone write that waits for other writers after its fdatasync, and a login record queued with it at once', async () => {
    const events: string[] = []
    const storage = openSqliteStorage(join(dir, 'secrets.db'), {
      dataSync: (fd) => {
        events.push('sync')
        fdatasyncSync(fd)
      },
    })
    // Two writers in flight together: a lone durable write then waits (a millisecond) for the other's next one.
    await Promise.all([
      storage.put('owner', sealed('A'), DEFAULT_LIMITS),
      storage.put('owner', sealed('B'), DEFAULT_LIMITS),
    ])
    events.length = 0
    const lone = storage.put('owner', sealed('C'), DEFAULT_LIMITS).then(() => events.push('answered C'))
    void storage.claimSignature('sig', 100, 100, 61).then((fresh) => events.push(`login ${fresh}`))
    await lone
    // Fixed: a window in which no further sync or answer may come.
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.deepEqual(events, ['login true', 'sync', 'answered C'])
    assert.deepEqual(
      (await storage.list('owner')).map((s) => s.name),
      ['A', 'B', 'C'],
    )
    assert.equal(await storage.claimSignature('sig', 100, 100, 61), false, 'the login record was kept')
    await storage.close()
  })

  it('answers the health check while open, and fails it once closed', async () => {
    const storage = openSqliteStorage(join(dir, 'secrets.db'))
    await storage.ping()
    await storage.close()
    await assert.rejects(storage.ping(), /database connection is not open/)
  })

  it('leaves everything in the one database file once closed, the WAL folded in and removed', async () => {
    const file = join(dir, 'secrets.db')
    const storage = openSqliteStorage(file)
    await storage.put('owner', sealed('A'), DEFAULT_LIMITS)
    assert.ok(statSync(`${file}-wal`).size > 0, 'the write is in the WAL while open')
    await storage.close()
    assert.equal(existsSync(`${file}-wal`), false)
    assert.equal(existsSync(`${file}-shm`), false)
    // The file alone (as a backup copies it) holds the secret.
    const db = openSqlite(file, {readonly: true})
    try {
      assert.deepEqual(db.prepare('SELECT owner, name FROM secrets').all(), [{owner: 'owner', name: 'A'}])
    } finally {
      db.close()
    }
  })

  it("drops the first layout's signature table once its signatures are moved", async () => {
    const file = join(dir, 'secrets.db')
    writeFirstLayout(file)
    const storage = openSqliteStorage(file)
    assert.equal(await storage.claimSignature('before-upgrade', 1000, 1010, 61), false, 'migrated')
    await storage.close()
    const db = openSqlite(file, {readonly: true})
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()
      assert.deepEqual(tables, [{name: 'login_signatures'}, {name: 'secrets'}, {name: 'usage_total'}])
      assert.deepEqual(db.prepare('SELECT signed_at, signature FROM login_signatures').all(), [
        {signed_at: 1000, signature: 'before-upgrade'},
      ])
    } finally {
      db.close()
    }
  })
})
