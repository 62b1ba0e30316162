import {strict as assert} from 'node:assert'
import {spawnSync} from 'node:child_process'
import {createRequire} from 'node:module'
import {fileURLToPath} from 'node:url'

import {openSqlite, sqliteDriverName} from '../../../src/lib/sqlite/open.js'

const major = Number(process.versions.node.split('.')[0])

describe('openSqlite (the SQLite driver for this Node)', () => {
  it('loads better-sqlite3 12 on Node 20 and 13 (Node-API) on Node 22 and later', () => {
    const name = sqliteDriverName()
    const version: string = createRequire(import.meta.url)(`${name}/package.json`).version
    assert.equal(name, major >= 22 ? 'better-sqlite3-13' : 'better-sqlite3')
    assert.equal(Number(version.split('.')[0]), major >= 22 ? 13 : 12)
    const db = openSqlite(':memory:')
    assert.deepEqual(db.prepare('SELECT 40 + 2 AS n').get(), {n: 42})
    db.close()
  })

  // better-sqlite3 12 on Node 24 aborted this process (exit 134) every time: its collected objects remove an
  // environment cleanup hook while no Environment is current (src/lib/sqlite/open.ts).
  it('a process that drops hundreds of databases and statements under garbage collection exits cleanly', function () {
    this.timeout(60_000)
    const open = fileURLToPath(new URL('../../../src/lib/sqlite/open.ts', import.meta.url))
    const script = `
      import {openSqlite} from ${JSON.stringify(open)}
      for (let i = 0; i < 300; i++) {
        const db = openSqlite(':memory:')
        db.prepare('SELECT 1').get()
        if (i % 2) db.close()
      }
      let junk = []
      for (let i = 0; i < 300000; i++) junk.push({i, s: 'x'.repeat(40)})
      setTimeout(() => { junk = null; console.log('done') }, 20)
    `
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 50_000,
    })
    assert.doesNotMatch(run.stderr, /Assertion failed/)
    assert.deepEqual(
      {status: run.status, signal: run.signal, stdout: run.stdout.trim()},
      {status: 0, signal: null, stdout: 'done'},
    )
  })
})
