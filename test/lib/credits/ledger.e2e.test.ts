/**
 * The localnet's credit ledger on a real SQLite file: holds refused past what is free (two at once cannot spend the
 * same credits), a hold given back whole forgets its job, a settlement never charges more than was held, an
 * Idempotency-Key's states (new, pending, answered, another request), the in-progress keys of a process that is gone
 * (orphans), and the ledger as another process (the `localnet fund` command) sees it. Also the client's wait for a
 * 429's Retry-After.
 */
import {strict as assert} from 'node:assert'
import {spawnSync} from 'node:child_process'
import {chmodSync, statSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {openCreditLedger} from '../../../src/lib/credits/ledger.js'
import {MAX_RETRY_AFTER_MS, retryAfterMs} from '../../../src/lib/http/api-client.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {openSqlite, sqliteDriverName} from '../../../src/lib/sqlite/open.js'

/** The SQLite driver this Node loads, for a child process that writes the way the ledger does. */
function sqliteDriverPath(): string {
  return createRequire(import.meta.url).resolve(sqliteDriverName())
}

/** A listing saved under an Idempotency-Key before it was sent. */
const intent = {
  kind: 'list' as const,
  job: 'J',
  tx: 'T',
  lastValidBlockHeight: 9,
  units: 5,
  status: 200,
  answer: {job: 'J'},
}

describe('credit ledger', () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir('gpunet-credits-')
  })
  afterEach(() => removeDir(dir))

  it('holds only what is free, settles at most what was held, and forgets a listing that never landed', () => {
    const file = join(dir, 'credits.db')
    const ledger = openCreditLedger(file)
    ledger.topUp('alice', 1_000, 1)
    const hold = (job: string, units: number) => ledger.reserve('alice', {job, market: 'm', price: 1, units}, 2)
    assert.equal(hold('j1', 600), true)
    assert.equal(hold('j2', 600), false, 'two holds cannot spend the same credits')
    assert.equal(hold('j2', 400), true)
    assert.deepEqual(ledger.balance('alice'), {assigned: 1_000, reserved: 1_000, settled: 0})
    assert.equal(hold('j1', 1), false, 'an extension needs free credits too')

    ledger.release('j2', 400)
    assert.equal(ledger.job('j2'), undefined, 'a hold given back whole leaves no job')
    ledger.settle('j1', 10_000, 3)
    assert.deepEqual(ledger.balance('alice'), {assigned: 1_000, reserved: 0, settled: 600}, 'never more than held')
    ledger.settle('j1', 1, 4)
    assert.equal(ledger.balance('alice').settled, 600, 'settled once')
    assert.deepEqual(ledger.openJobs('alice'), [])
    assert.deepEqual(ledger.balance('bob'), {assigned: 0, reserved: 0, settled: 0})
    ledger.close()

    // Another process's view (localnet fund writes beside the running localnet).
    const again = openCreditLedger(file)
    assert.deepEqual(again.topUp('alice', 5, 5), {assigned: 1_005, reserved: 0, settled: 600})
    again.close()
  })

  it('frees only what is neither held nor spent, and an extension adds to its hold', () => {
    const file = join(dir, 'credits.db')
    const ledger = openCreditLedger(file)
    ledger.topUp('alice', 1_000, 1)
    const reader = openSqlite(file, {readonly: true})
    assert.equal(reader.prepare('PRAGMA journal_mode').pluck().get(), 'wal', 'a new ledger writes ahead')
    reader.close()
    const hold = (job: string, units: number) => ledger.reserve('alice', {job, market: 'm', price: 2, units}, 2)
    assert.equal(hold('j1', 300), true)
    ledger.listed('j1', 'T1')
    assert.equal(hold('j1', 200), true, 'an extension with free credits')
    assert.deepEqual(ledger.job('j1'), {
      job: 'j1',
      owner: 'alice',
      market: 'm',
      price: 2,
      reserved: 500,
      settled: null,
      tx: 'T1',
    })
    assert.deepEqual(
      ledger.openJobs('alice').map((j) => j.job),
      ['j1'],
    )
    ledger.settle('j1', 400, 3)
    assert.equal(hold('j2', 601), false, 'what was spent is not free again')
    assert.equal(hold('j2', 600), true)
    assert.deepEqual(ledger.balance('alice'), {assigned: 1_000, reserved: 600, settled: 400})
    ledger.close()
    assert.throws(() => ledger.balance('alice'), /not open/, 'closed means closed')
  })

  it('keeps its files 0600, a WAL a crashed process left readable by others included, and writes ahead (WAL)', () => {
    const file = join(dir, 'credits.db')
    // A process that wrote and was killed before closing leaves its WAL and shared memory with their content: SQLite
    // opens those as they are (it only gives files it creates the database's mode).
    const writer = `const db = new (require(${JSON.stringify(sqliteDriverPath())}))(${JSON.stringify(file)})
      db.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (a); INSERT INTO t VALUES (1)")
      process.kill(process.pid, 'SIGKILL')`
    const crashed = spawnSync(process.execPath, ['-e', writer], {encoding: 'utf8'})
    assert.equal(crashed.signal, 'SIGKILL', crashed.stderr)
    for (const suffix of ['', '-wal', '-shm']) chmodSync(`${file}${suffix}`, 0o644)
    assert.ok(statSync(`${file}-wal`).size > 0, 'the WAL holds the write')
    const ledger = openCreditLedger(file)
    ledger.topUp('alice', 1, 1)
    for (const suffix of ['', '-wal', '-shm']) assert.equal(statSync(`${file}${suffix}`).mode & 0o777, 0o600, suffix)
    const reader = openSqlite(file, {readonly: true})
    assert.equal(reader.prepare('PRAGMA journal_mode').pluck().get(), 'wal')
    assert.equal(reader.prepare('SELECT a FROM t').pluck().get(), 1, "the crashed process's write was kept")
    reader.close()
    ledger.close()
  })

  it('a key another process claimed and saved a listing under, then ended, is an orphan with that listing', () => {
    const file = join(dir, 'credits.db')
    const ledger = openCreditLedger(file)
    const module = fileURLToPath(new URL('../../../src/lib/credits/ledger.ts', import.meta.url))
    const script = `import {openCreditLedger} from ${JSON.stringify(module)}
      const ledger = openCreditLedger(${JSON.stringify(file)})
      ledger.claimKey('alice', 'child', 'd', 1)
      ledger.intend('alice', 'child', ${JSON.stringify(intent)})
      ledger.close()`
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    })
    assert.equal(child.status, 0, child.stderr)
    // This process's key, and one of a dead pid that started when this process did: only the pid tells them apart.
    assert.deepEqual(ledger.claimKey('alice', 'mine', 'd', 2), {state: 'new'})
    ledger.intend('alice', 'mine', {...intent, job: 'M'})
    const db = openSqlite(file)
    const mine = db.prepare("SELECT holder_start, intent FROM credit_requests WHERE key = 'mine'").get() as {
      holder_start: number
      intent: string
    }
    assert.deepEqual(JSON.parse(mine.intent), {...intent, job: 'M'})
    const start = mine.holder_start
    db.prepare(
      "INSERT INTO credit_requests (owner, key, request, created_at, holder_pid, holder_start) VALUES ('alice', 'twin', 'd', 3, ?, ?)",
    ).run(spawnSync('true').pid!, start)
    db.close()
    assert.deepEqual(
      ledger.orphans().sort((a, b) => a.key.localeCompare(b.key)),
      [
        {owner: 'alice', key: 'child', intent},
        {owner: 'alice', key: 'twin', intent: null},
      ],
    )
    ledger.close()
  })

  it("an Idempotency-Key left in progress by a process that is gone is an orphan, with the listing it saved; this process's are not", () => {
    const file = join(dir, 'credits.db')
    // A ledger of the first release: credit_requests without the holder and intent columns.
    const old = openSqlite(file)
    old.exec(
      `CREATE TABLE credit_requests (owner TEXT NOT NULL, key TEXT NOT NULL, request TEXT NOT NULL, status INTEGER,
       answer TEXT, created_at INTEGER NOT NULL, PRIMARY KEY (owner, key))`,
    )
    old
      .prepare("INSERT INTO credit_requests (owner, key, request, created_at) VALUES ('alice', 'before', 'd', 1)")
      .run()
    old.close()
    const ledger = openCreditLedger(file)
    assert.deepEqual(ledger.claimKey('alice', 'mine', 'd', 2), {state: 'new'})
    ledger.intend('alice', 'mine', intent)
    // A process that ran and ended: its pid is not alive.
    const dead = spawnSync('true').pid!
    const db = openSqlite(file)
    const claim = db.prepare(
      `INSERT INTO credit_requests (owner, key, request, created_at, holder_pid, holder_start, intent)
       VALUES ('alice', ?, 'd', 3, ?, ?, ?)`,
    )
    claim.run('dead', dead, 1, JSON.stringify(intent))
    // This process's pid again, started at another time: an earlier process in a container that reuses pids.
    claim.run('reused', process.pid, 1, null)
    // A live process other than this one (the test's parent): still its own.
    claim.run('alive', process.ppid, 1, null)
    db.close()

    const orphans = ledger.orphans().sort((a, b) => a.key.localeCompare(b.key))
    assert.deepEqual(orphans, [
      {owner: 'alice', key: 'before', intent: null},
      {owner: 'alice', key: 'dead', intent},
      {owner: 'alice', key: 'reused', intent: null},
    ])
    ledger.answerKey('alice', 'dead', 200, intent.answer)
    ledger.dropKey('alice', 'reused')
    assert.deepEqual(
      ledger.orphans().map((o) => o.key),
      ['before'],
    )
    assert.deepEqual(ledger.claimKey('alice', 'dead', 'd', 4), {state: 'answered', status: 200, answer: {job: 'J'}})
    ledger.close()
  })

  it('tells an Idempotency-Key new, pending, answered, or used for another request', () => {
    const ledger = openCreditLedger(join(dir, 'credits.db'))
    assert.deepEqual(ledger.claimKey('alice', 'k', 'digest-a', 1), {state: 'new'})
    assert.deepEqual(ledger.claimKey('alice', 'k', 'digest-a', 2), {state: 'pending'})
    assert.deepEqual(ledger.claimKey('alice', 'k', 'digest-b', 2), {state: 'conflict'})
    assert.deepEqual(ledger.claimKey('bob', 'k', 'digest-b', 2), {state: 'new'}, 'keys are per owner')
    ledger.answerKey('alice', 'k', 200, {job: 'J'})
    assert.deepEqual(ledger.claimKey('alice', 'k', 'digest-a', 3), {state: 'answered', status: 200, answer: {job: 'J'}})
    ledger.dropKey('alice', 'k')
    assert.equal(ledger.claimKey('alice', 'k', 'digest-a', 4).state, 'answered', 'an answered key is never dropped')
    ledger.dropKey('bob', 'k')
    assert.deepEqual(ledger.claimKey('bob', 'k', 'digest-c', 5), {state: 'new'}, 'a dropped key may be sent again')
    ledger.close()
  })
})

describe('Retry-After', () => {
  it('takes seconds or an HTTP date, backs off without one, and never waits past the bound', () => {
    assert.equal(retryAfterMs('2', 0), 2000)
    assert.equal(retryAfterMs(' 0 ', 0), 0)
    const soon = retryAfterMs(new Date(Date.now() + 3000).toUTCString(), 0)
    assert.ok(soon > 1000 && soon <= 3000, `${soon}`)
    assert.equal(retryAfterMs(new Date(Date.now() - 60_000).toUTCString(), 0), 0)
    assert.equal(retryAfterMs(null, 0), 250)
    assert.equal(retryAfterMs('nonsense', 2), 1000)
    assert.equal(retryAfterMs('86400', 0), MAX_RETRY_AFTER_MS)
  })
})
