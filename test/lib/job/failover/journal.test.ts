/**
 * The failover journal on a real SQLite file: a move's rows go through their stages, each saved before its
 * transaction would be sent, survive the process (a reopened file holds them), are found by the old job and the
 * new, and are kept private (0600).
 */
import {strict as assert} from 'node:assert'
import {statSync} from 'node:fs'

import {
  type FailoverJournal,
  journalFile,
  type MoveStart,
  openFailoverJournal,
} from '../../../../src/lib/job/failover/journal.js'
import {removeDir, tempDir} from '../../../helpers/files.js'

const START: MoveStart = {
  network: 'localnet',
  program: 'PROGRAM',
  project: 'WALLET',
  oldJob: 'OLD',
  fromMarket: 'A',
  toMarket: 'B',
  why: 'still QUEUED after 60 s on A',
  cid: 'QmDefinition',
  timeout: null,
  delist: {raw: 'AQ==', signature: 'DELIST', lastValidBlockHeight: 100},
}

describe('failover journal', () => {
  let dir: string
  let file: string
  let journal: FailoverJournal
  let clock = 1000
  beforeEach(() => {
    dir = tempDir('gpunet-journal-')
    file = journalFile(dir)
    journal = openFailoverJournal(file, () => clock++)
  })
  afterEach(() => {
    journal.close()
    removeDir(dir)
  })

  it('takes a move through its stages, each kept on disk before the next', () => {
    const begun = journal.begin(START)
    assert.equal(begun.stage, 'delist-saved')
    assert.deepEqual(begun.delist, START.delist)
    assert.equal(begun.newJob, null)
    journal.delisted(begun.id)
    const listing = journal.listing(begun.id, {
      job: 'NEW',
      run: 'RUN',
      list: {raw: 'Ag==', signature: 'LIST', lastValidBlockHeight: 120},
    })
    assert.equal(listing.stage, 'list-saved')
    assert.equal(listing.newJob, 'NEW')
    assert.equal(listing.list?.signature, 'LIST')
    // What a killed process leaves: another process opens the file and finds the row where it was.
    journal.close()
    journal = openFailoverJournal(file)
    const [open] = journal.open('localnet')
    assert.equal(open?.stage, 'list-saved')
    assert.equal(open?.list?.lastValidBlockHeight, 120)
    assert.ok(open!.updatedAt > open!.createdAt)
    const moved = journal.finish(begun.id, 'moved')
    assert.equal(moved.stage, 'moved')
    assert.deepEqual(journal.open('localnet'), [], 'a final stage is not open')
  })

  it('finds a move by its old job and its new one, per network', () => {
    const first = journal.begin(START)
    journal.listing(first.id, {job: 'NEW', run: 'RUN', list: {raw: 'Ag==', signature: 'L', lastValidBlockHeight: 1}})
    journal.begin({...START, network: 'devnet', oldJob: 'OTHER'})
    assert.deepEqual(
      journal.open('localnet', 'OLD').map((r) => r.id),
      [first.id],
    )
    assert.deepEqual(
      journal.open('localnet', 'NEW').map((r) => r.id),
      [first.id],
    )
    assert.deepEqual(journal.open('localnet', 'OTHER'), [])
    assert.equal(journal.open('devnet').length, 1)
    assert.equal(journal.movedFrom('localnet', 'OLD')?.id, first.id)
    assert.equal(journal.movedTo('localnet', 'NEW')?.id, first.id)
    assert.equal(journal.movedFrom('localnet', 'NEW'), null)
  })

  it('is readable by its owner only', () => {
    journal.begin(START)
    assert.equal(statSync(file).mode & 0o777, 0o600)
  })
})
