/**
 * The job cache when a read fails after a newer one replaced it (issue 26, secrets survivors): the failure drops
 * only its own entry, so the newer answer is still reused for its TTL instead of costing the chain another read.
 */
import {strict as assert} from 'node:assert'

import type {JobAuthority, JobRecord} from '../../../../src/lib/secrets/service/auth.js'
import {cachedJobAuthority} from '../../../../src/lib/secrets/service/index.js'

describe('secrets service: job cache, a late failure', () => {
  it('keeps a fresh read of a job when an older read of it fails afterwards', async () => {
    const reads: string[] = []
    let failOlder: (error: Error) => void = () => {}
    const record: JobRecord = {poster: 'P', state: 'queued', timeout: 60, runs: [], definition: 'def-A'}
    const inner: JobAuthority = {
      getJob: (job, fresh) => {
        reads.push(fresh ? 'fresh' : 'cached')
        // The first read hangs until the test fails it; any other answers at once.
        if (reads.length === 1) return new Promise((_resolve, reject) => (failOlder = reject))
        return Promise.resolve(record)
      },
      getDefinition: async () => ({}),
    }
    const cache = cachedJobAuthority(inner, {now: () => 0})
    const older = cache.getJob('A')
    assert.equal(await cache.getJob('A', true), record)
    failOlder(new Error('chain down'))
    await assert.rejects(older, /chain down/)
    assert.equal(await cache.getJob('A'), record, 'the fresh answer')
    assert.deepEqual(reads, ['cached', 'fresh'], 'answered from the cache: no third read')
  })
})
