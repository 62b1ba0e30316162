/**
 * The secrets service's job cache (issue 26, secrets survivors: only end-to-end tests reached it). A job's record
 * is reused for its TTL (at most 5 s, so a stopped job's tokens die soon) and read again at once when asked fresh.
 * Concurrent lookups share one read, a failure is not remembered, and the oldest entries go past the bound.
 */
import {strict as assert} from 'node:assert'

import type {JobAuthority, JobRecord} from '../../../../src/lib/secrets/service/auth.js'
import {cachedJobAuthority, JOB_CACHE_TTL_MS} from '../../../../src/lib/secrets/service/index.js'

/** An authority counting its reads, whose answers the test sets. */
function counting() {
  const reads: string[] = []
  let fail = false
  const inner: JobAuthority = {
    getJob: async (job) => {
      reads.push(job)
      if (fail) throw new Error('chain down')
      return {poster: 'P', state: 'queued', timeout: 60, runs: [], definition: `def-${job}`} satisfies JobRecord
    },
    getDefinition: async (cid) => {
      reads.push(cid)
      return {cid}
    },
  }
  return {inner, reads, failNext: (value: boolean) => (fail = value)}
}

describe('secrets service: job cache', () => {
  it('reuses a record until its TTL has passed, to the millisecond, and reads again when asked fresh', async () => {
    let clock = 1_000_000
    const {inner, reads} = counting()
    const cache = cachedJobAuthority(inner, {ttlMs: 1000, now: () => clock})
    await cache.getJob('A')
    clock += 999
    await cache.getJob('A')
    assert.deepEqual(reads, ['A'], 'within the TTL')
    clock += 1
    await cache.getJob('A')
    assert.deepEqual(reads, ['A', 'A'], 'at the TTL it is read again')
    await cache.getJob('A', true)
    assert.deepEqual(reads, ['A', 'A', 'A'], 'fresh: read again at once')
  })

  it('keeps a record 3 s by default and never longer than 5 s', async () => {
    assert.equal(JOB_CACHE_TTL_MS, 3000)
    let clock = 0
    const {inner, reads} = counting()
    const cache = cachedJobAuthority(inner, {ttlMs: 60_000, now: () => clock})
    await cache.getJob('A')
    clock = 4999
    await cache.getJob('A')
    assert.equal(reads.length, 1)
    clock = 5000
    await cache.getJob('A')
    assert.equal(reads.length, 2, 'a TTL past 5 s is cut to 5 s')
  })

  it('shares one read between concurrent lookups, and forgets a failed one', async () => {
    const {inner, reads, failNext} = counting()
    const cache = cachedJobAuthority(inner, {now: () => 0})
    await Promise.all([cache.getJob('A'), cache.getJob('A'), cache.getJob('A')])
    assert.deepEqual(reads, ['A'])
    failNext(true)
    await assert.rejects(cache.getJob('B'), /chain down/)
    failNext(false)
    assert.equal((await cache.getJob('B'))?.definition, 'def-B', 'the failure was not kept')
    assert.deepEqual(reads, ['A', 'B', 'B'])
  })

  it('drops the oldest entry past its bound, and keeps definitions for good', async () => {
    let clock = 0
    const {inner, reads} = counting()
    const cache = cachedJobAuthority(inner, {maxEntries: 2, now: () => clock})
    await cache.getJob('A')
    await cache.getJob('B')
    await cache.getJob('C')
    await cache.getJob('B')
    assert.deepEqual(reads, ['A', 'B', 'C'], 'B is still kept')
    await cache.getJob('A')
    assert.deepEqual(reads, ['A', 'B', 'C', 'A'], 'A was dropped for C')
    await cache.getDefinition('Qm1')
    clock = 10 ** 12
    await cache.getDefinition('Qm1')
    assert.equal(reads.filter((r) => r === 'Qm1').length, 1, 'a CID’s content never changes')
  })
})
