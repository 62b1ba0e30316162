/** `job list --outcome`: the matches paged over the poster's jobs read newest first, and where the reading stops. */
import {strict as assert} from 'node:assert'

import {
  type IndexedJob,
  type IndexedJobState,
  type JobListQuery,
  listByOutcome,
  OUTCOME_SCAN_LIMIT,
} from '../../../src/lib/market/jobs/job-list.js'

const indexed = (i: number, state: IndexedJobState): IndexedJob => ({
  address: `job${i}`,
  state,
  market: 'M',
  node: 'N',
  project: 'P',
  payer: 'P',
  price: '1',
  timeout: 60,
  timeStart: 1_700_000_000 + i,
  timeEnd: state === 'RUNNING' ? 0 : 1_700_000_010 + i,
  ipfsJob: 'Qm',
  ipfsResult: null,
})

/** An indexer over `jobs` that filters by state and pages as the real one does, counting its calls. */
function indexer(jobs: IndexedJob[]) {
  const calls: JobListQuery[] = []
  const fetch = async (query: JobListQuery) => {
    calls.push(query)
    const matching = jobs.filter((job) => !query.state || job.state === query.state)
    return {jobs: matching.slice(query.offset, query.offset + query.limit), total: matching.length}
  }
  return {calls, fetch}
}

// No job here has a result to read: a content store is never asked.
const net = {content: () => assert.fail('no result to read') as never}
const query = (over: Partial<JobListQuery>): JobListQuery & {outcome: 'stopped'} => ({
  poster: 'P',
  limit: 20,
  offset: 0,
  ...over,
  outcome: 'stopped',
})

describe('job list --outcome', () => {
  // Of every three jobs: one the node gave up (STOPPED), one its poster ended (COMPLETED, no result), one running.
  const jobs = Array.from({length: 200}, (_, i) => indexed(i, (['STOPPED', 'COMPLETED', 'RUNNING'] as const)[i % 3]!))
  const stopped = jobs.filter((job) => job.state !== 'RUNNING').map((job) => job.address)

  it('pages over the stopped jobs of both chain states, neither repeating nor skipping one', async () => {
    const {calls, fetch} = indexer(jobs)
    const seen: string[] = []
    let page
    for (let offset = 0; ; offset += 20) {
      page = await listByOutcome(net, query({offset}), fetch, 'indexer', 1_800_000_000)
      seen.push(...page.jobs.map((job) => job.job))
      assert.ok(page.jobs.every((job) => job.outcome === 'stopped'))
      if (!page.more) break
      // Unknown while the reading stopped before the last job; exact once a page needed them all.
      assert.ok(page.total === null || page.total === stopped.length, String(page.total))
      if (offset === 0) assert.equal(page.total, null)
    }
    assert.deepEqual(seen, stopped)
    assert.equal(page.total, stopped.length, 'the last page read every job: the total is known')
    assert.ok(calls.every((call) => call.state === undefined && call.limit === 50))
  })

  it('reads no more pages than the page it answers needs', async () => {
    const {calls, fetch} = indexer(jobs)
    const page = await listByOutcome(net, query({limit: 5}), fetch, 'indexer', 1_800_000_000)
    assert.deepEqual(
      page.jobs.map((job) => job.job),
      stopped.slice(0, 5),
    )
    assert.equal(calls.length, 1)
  })

  it(`stops after the newest ${OUTCOME_SCAN_LIMIT} jobs, saying the total is unknown`, async () => {
    const running = Array.from({length: 2000}, (_, i) => indexed(i, i === 1999 ? 'STOPPED' : 'RUNNING'))
    const {calls, fetch} = indexer(running)
    const page = await listByOutcome(net, query({}), fetch, 'indexer', 1_800_000_000)
    assert.deepEqual([page.jobs.length, page.total, page.more], [0, null, false])
    assert.equal(calls.length, OUTCOME_SCAN_LIMIT / 50)
  })

  it('asks only for COMPLETED jobs for succeeded or failed, and for none when --state cannot end that way', async () => {
    const {calls, fetch} = indexer(jobs)
    await listByOutcome(net, {...query({}), outcome: 'failed'}, fetch, 'indexer', 1_800_000_000)
    assert.equal(calls[0]!.state, 'COMPLETED')
    const none = await listByOutcome(net, query({state: 'RUNNING'}), fetch, 'indexer', 1_800_000_000)
    assert.deepEqual([none.jobs, none.total, calls.length], [[], 0, 2])
  })
})
