/**
 * A job login from a key that does not run the job costs chain reads every time (issue 42, finding 9). Such
 * refusals are counted per address: past the limit the login answers 429 from the cached job alone, without a
 * read, and a node whose claim has landed since still gets in once the cache sees it.
 */
import {strict as assert} from 'node:assert'

import type {JobAuthority, JobRecord} from '../../../../src/lib/secrets/service/auth.js'
import {cachedJobAuthority, JOB_CACHE_TTL_MS} from '../../../../src/lib/secrets/service/job-cache.js'
import {
  call,
  MemoryAuthority,
  newAddress,
  newWallet,
  signLogin,
  sqliteAdapter,
  startService,
} from '../../../helpers/secrets.js'

describe('secrets service: refused job logins are rate-limited per address', () => {
  it('answers 429 past the limit without reading the chain, and lets the key in once its claim shows', async () => {
    const memory = new MemoryAuthority()
    const node = newWallet()
    const job = newAddress()
    const record = memory.run(job, {node: node.address, poster: newAddress()})
    let reads = 0
    // Copies, as a chain read gives: the cache holds what it read, not the live record.
    const counting: JobAuthority = {
      async getJob(address) {
        reads++
        const found = await memory.getJob(address)
        return found && (structuredClone(found) as JobRecord)
      },
      getDefinition: (cid) => memory.getDefinition(cid),
    }
    let cacheNow = Date.now()
    const s = await startService(sqliteAdapter, {
      authority: cachedJobAuthority(counting, {now: () => cacheNow}),
      limits: {jobRefusalsPerAddress: {limit: 3, windowMs: 60_000}},
    })
    try {
      const stranger = newWallet()
      const attempt = () => call(s.url, 'POST', '/login', {params: signLogin(stranger, {job})})
      for (let i = 0; i < 3; i++) {
        const before = reads
        const refused = await attempt()
        assert.equal(refused.status, 403, refused.text)
        assert.ok(reads - before >= 1, 'a refusal under the limit reads the job afresh')
      }
      const before = reads
      const limited = await attempt()
      assert.equal(limited.status, 429, limited.text)
      assert.equal((limited.body as {error: {code: string}}).error.code, 'rate_limited')
      assert.ok(Number(limited.headers.get('retry-after')) >= 1)
      assert.equal(reads, before, 'past the limit, no chain read')
      // Another key is not held back by the stranger's refusals; the job's node still logs in.
      assert.equal((await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})).status, 200)
      // The stranger's claim lands: while the cache holds the older view it is still 429, then it gets in.
      record.runs.push({node: stranger.address, time: Math.floor(Date.now() / 1000)})
      assert.equal((await attempt()).status, 429)
      cacheNow += JOB_CACHE_TTL_MS + 1
      const admitted = await attempt()
      assert.equal(admitted.status, 200, admitted.text)
    } finally {
      await s.stop()
    }
  })

  it("does not count the localnet node's own address (exempt), nor an unknown job", async () => {
    const memory = new MemoryAuthority()
    const job = newAddress()
    memory.run(job, {node: newAddress(), poster: newAddress()})
    const s = await startService(sqliteAdapter, {
      authority: memory,
      limits: {jobRefusalsPerAddress: {limit: 1, windowMs: 60_000}},
    })
    try {
      const own = newWallet()
      s.service.exemptFromLoginLimits(own.address)
      for (let i = 0; i < 3; i++) {
        const now = Math.floor(Date.now() / 1000) - i
        const answer = await call(s.url, 'POST', '/login', {params: signLogin(own, {job, timestamp: now})})
        assert.equal(answer.status, 403, answer.text)
      }
      const other = newWallet()
      for (let i = 0; i < 3; i++) {
        const now = Math.floor(Date.now() / 1000) - i
        const answer = await call(s.url, 'POST', '/login', {
          params: signLogin(other, {job: newAddress(), timestamp: now}),
        })
        assert.equal(answer.status, 404, answer.text)
      }
    } finally {
      await s.stop()
    }
  })
})
