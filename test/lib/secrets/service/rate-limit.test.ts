import {strict as assert} from 'node:assert'

import {RateLimiter} from '../../../../src/lib/secrets/service/rate-limit.js'

describe('RateLimiter', () => {
  it('allows the limit per window and key, then answers the seconds to wait', () => {
    const limiter = new RateLimiter({limit: 2, windowMs: 10_000})
    assert.deepEqual(limiter.hit('a', 0), {allowed: true})
    assert.deepEqual(limiter.hit('a', 1000), {allowed: true})
    assert.deepEqual(limiter.hit('a', 2500), {allowed: false, retryAfter: 8})
    assert.deepEqual(limiter.hit('b', 2500), {allowed: true})
    assert.deepEqual(limiter.hit('a', 10_000), {allowed: true})
  })
})
