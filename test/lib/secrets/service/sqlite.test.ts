import {strict as assert} from 'node:assert'
import {chmodSync, existsSync, fdatasyncSync, fstatSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {DEFAULT_LIMITS} from '../../../../src/lib/secrets/service/server.js'
import {type DataSync, openSqliteStorage} from '../../../../src/lib/secrets/service/sqlite.js'
import {StorageBusyError} from '../../../../src/lib/secrets/service/storage.js'
import {tempDir, writeFirstLayout} from '../../../helpers/secrets.js'
import {openSqlite} from '../../../../src/lib/sqlite/open.js'

const mode = (file: string) => statSync(file).mode & 0o777

describe('SQLite secret storage', () => {
  it('keeps the database, -wal and -shm files 0600 in a directory of mode 0755, new or existing', async () => {
    const {dir, remove} = await tempDir()
    try {
      chmodSync(dir, 0o755)
      const file = join(dir, 'secrets.db')
      const storage = openSqliteStorage(file)
      await storage.put('owner', [{name: 'A', sealed: Buffer.from('sealed')}], DEFAULT_LIMITS)
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        assert.ok(existsSync(f), f)
        assert.equal(mode(f).toString(8), '600', f)
      }
      await storage.close()

      // A file left readable by an older version is made private on the next start.
      const older = join(dir, 'older.db')
      writeFileSync(older, '')
      chmodSync(older, 0o644)
      const reopened = openSqliteStorage(older)
      await reopened.put('owner', [{name: 'A', sealed: Buffer.from('sealed')}], DEFAULT_LIMITS)
      for (const f of [older, `${older}-wal`, `${older}-shm`]) assert.equal(mode(f).toString(8), '600', f)
      await reopened.close()
    } finally {
      await remove()
    }
  })

  it('commits writes that arrive together in one group, each refused or kept on its own', async () => {
    const {dir, remove} = await tempDir()
    try {
      const storage = openSqliteStorage(join(dir, 'secrets.db'))
      const quota = {...DEFAULT_LIMITS, secretsPerOwner: 2}
      const outcomes = await Promise.allSettled([
        storage.put('a', [{name: 'X', sealed: Buffer.from('1')}], quota),
        storage.put(
          'a',
          [
            {name: 'Y', sealed: Buffer.from('2')},
            {name: 'Z', sealed: Buffer.from('3')},
          ],
          quota,
        ),
        storage.put('b', [{name: 'X', sealed: Buffer.from('4')}], quota),
        storage.claimSignature('sig', 100, 100, 61),
        storage.claimSignature('sig', 100, 100, 61),
      ])
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'],
      )
      assert.deepEqual(
        outcomes.slice(3).map((o) => (o as PromiseFulfilledResult<boolean>).value),
        [true, false],
      )
      assert.deepEqual(
        (await storage.list('a')).map((s) => s.name),
        ['X'],
      )
      assert.deepEqual(
        (await storage.list('b')).map((s) => s.name),
        ['X'],
      )
      await storage.close()
    } finally {
      await remove()
    }
  })

  it('remembers a login signature until it is older than it may be, also from the first table layout', async () => {
    const {dir, remove} = await tempDir()
    try {
      const file = join(dir, 'secrets.db')
      writeFirstLayout(file)
      const storage = openSqliteStorage(file)
      assert.equal(await storage.claimSignature('before-upgrade', 1000, 1010, 61), false, 'migrated')
      assert.equal(await storage.claimSignature('fresh', 1005, 1010, 61), true)
      assert.equal(await storage.claimSignature('fresh', 1005, 1060, 61), false)
      // At 1100 everything signed before 1039 is forgotten: the clock check refuses those timestamps by then.
      assert.equal(await storage.claimSignature('later', 1100, 1100, 61), true)
      assert.equal(await storage.claimSignature('fresh', 1005, 1100, 61), true)
      await storage.close()
    } finally {
      await remove()
    }
  })

  it('refuses a write with StorageBusyError while another connection keeps the write lock, and takes it after', async () => {
    const {dir, remove} = await tempDir()
    try {
      const file = join(dir, 'secrets.db')
      const storage = openSqliteStorage(file, {busyTimeoutMs: 50})
      const other = openSqlite(file)
      other.exec('BEGIN IMMEDIATE')
      await assert.rejects(
        storage.put('owner', [{name: 'A', sealed: Buffer.from('1')}], DEFAULT_LIMITS),
        (error: Error) => error instanceof StorageBusyError && error.message === 'the database is busy',
      )
      other.exec('COMMIT')
      other.close()
      await storage.put('owner', [{name: 'A', sealed: Buffer.from('1')}], DEFAULT_LIMITS)
      assert.deepEqual(
        (await storage.list('owner')).map((s) => s.name),
        ['A'],
      )
      await storage.close()
    } finally {
      await remove()
    }
  })

  it('reads what another process wrote to the same file, and its own writes, despite its read cache', async () => {
    const {dir, remove} = await tempDir()
    try {
      const file = join(dir, 'secrets.db')
      const a = openSqliteStorage(file)
      const b = openSqliteStorage(file)
      const names = async () => (await a.list('owner')).map((s) => s.name)
      await a.put('owner', [{name: 'A', sealed: Buffer.from('1')}], DEFAULT_LIMITS)
      assert.deepEqual(await names(), ['A'])
      await b.put('owner', [{name: 'B', sealed: Buffer.from('2')}], DEFAULT_LIMITS)
      assert.deepEqual(await names(), ['A', 'B'])
      await a.delete('owner', 'A')
      assert.deepEqual(await names(), ['B'])
      await b.delete('owner', 'B')
      assert.deepEqual(await names(), [])
      await a.close()
      await b.close()
    } finally {
      await remove()
    }
  })

  it('answers a write only after an fdatasync of the WAL that holds it, one for writes that wait together', async () => {
    const {dir, remove} = await tempDir()
    try {
      const file = join(dir, 'secrets.db')
      const events: string[] = []
      // The real fdatasync, watched: what the WAL holds when it starts, and when it ends.
      const dataSync: DataSync = (fd) => {
        assert.equal(fstatSync(fd).ino, statSync(`${file}-wal`).ino, 'the descriptor is the WAL')
        const wal = readFileSync(`${file}-wal`, 'latin1')
        events.push(`sync [${['first', 'second', 'third'].filter((v) => wal.includes(`sealed-${v}`)).join(' ')}]`)
        fdatasyncSync(fd)
        events.push('synced')
      }
      const storage = openSqliteStorage(file, {dataSync})
      const put = (value: string) =>
        storage.put('owner', [{name: value.toUpperCase(), sealed: Buffer.from(`sealed-${value}`)}], DEFAULT_LIMITS)
      await put('first').then(() => events.push('answered first'))
      await Promise.all([
        put('second').then(() => events.push('answered second')),
        put('third').then(() => events.push('answered third')),
      ])
      // Login records are not waited for: no fdatasync.
      assert.equal(await storage.claimSignature('sig', 100, 100, 61), true)
      assert.deepEqual(events, [
        'sync [first]',
        'synced',
        'answered first',
        'sync [first second third]',
        'synced',
        'answered second',
        'answered third',
      ])
      await storage.close()
    } finally {
      await remove()
    }
  })

  it('fails the writes of a failed fdatasync and every durable write after it, and flushes pending ones on close', async () => {
    const {dir, remove} = await tempDir()
    try {
      let fail = false
      const dataSync: DataSync = (fd) => {
        if (fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), {code: 'EIO'})
        fdatasyncSync(fd)
      }
      const storage = openSqliteStorage(join(dir, 'secrets.db'), {dataSync})
      const put = (name: string) => storage.put('owner', [{name, sealed: Buffer.from(name)}], DEFAULT_LIMITS)
      await put('A')
      fail = true
      await assert.rejects(put('B'), /cannot flush the secrets database to the disk: EIO/)
      fail = false
      await assert.rejects(put('C'), /cannot flush/)
      assert.equal(await storage.claimSignature('sig', 100, 100, 61), true)
      await storage.close()

      // Two writers in flight make a lone write wait for a second one; close() flushes it at once.
      const flushed: number[] = []
      const second = openSqliteStorage(join(dir, 'other.db'), {
        dataSync: (fd) => {
          flushed.push(Date.now())
          fdatasyncSync(fd)
        },
      })
      const write = (name: string) => second.put('owner', [{name, sealed: Buffer.from(name)}], DEFAULT_LIMITS)
      await Promise.all([write('D'), write('E')])
      const lone = write('F')
      await new Promise((resolve) => setImmediate(resolve))
      assert.equal(flushed.length, 1, 'the lone write waits for the other writer')
      await second.close()
      await lone
      assert.equal(flushed.length, 2)
    } finally {
      await remove()
    }
  })
})
