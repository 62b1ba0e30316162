import {strict as assert} from 'node:assert'

import {RateLimiter} from '../../../../src/lib/secrets/service/rate-limit.js'

describe('RateLimiter', () => {
  it('blocks a key once it used its allowance in the window, answering the seconds to wait', () => {
    const limiter = new RateLimiter({limit: 2, windowMs: 10_000})
    assert.equal(limiter.blocked('a', 0), undefined)
    limiter.hit('a', 0)
    assert.equal(limiter.blocked('a', 500), undefined)
    limiter.hit('a', 1000)
    assert.equal(limiter.blocked('a', 2500), 8)
    assert.equal(limiter.blocked('b', 2500), undefined, 'keys count apart')
    assert.equal(limiter.blocked('a', 10_000), undefined, 'a new window starts')
  })

  it("counts a member once per window with hitOnce (an owner's concurrent first writes are one new owner)", () => {
    const limiter = new RateLimiter({limit: 2, windowMs: 10_000})
    for (let i = 0; i < 10; i++) limiter.hitOnce('ip', 'owner-a', 0)
    assert.equal(limiter.blocked('ip', 1), undefined, 'ten writes of one owner count once')
    limiter.hitOnce('ip', 'owner-b', 1)
    assert.equal(limiter.blocked('ip', 2), 10, 'two distinct owners use the allowance')
    limiter.hitOnce('ip', 'owner-a', 10_000)
    assert.equal(limiter.blocked('ip', 10_001), undefined, 'a new window counts the owner afresh, once')
  })
})
