import {strict as assert} from 'node:assert'
import {chmodSync, existsSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {DEFAULT_LIMITS} from '../../../../src/lib/secrets/service/server.js'
import {openSqliteStorage} from '../../../../src/lib/secrets/service/sqlite.js'
import {tempDir} from '../../../helpers/secrets.js'

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
        storage.claimSignature('sig', 100, 1),
        storage.claimSignature('sig', 100, 1),
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
})
