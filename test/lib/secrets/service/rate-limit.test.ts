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

  it('starts a new window for a hit at its end exactly, and counts a member again there', () => {
    const limiter = new RateLimiter({limit: 1, windowMs: 1000})
    limiter.hit('a', 0)
    assert.equal(limiter.blocked('a', 999), 1)
    // At 1000 the first window is over: this hit opens a window of its own, which it alone uses up.
    limiter.hit('a', 1000)
    assert.equal(limiter.blocked('a', 1999), 1)
    assert.equal(limiter.blocked('a', 2000), undefined)
    const members = new RateLimiter({limit: 2, windowMs: 1000})
    members.hitOnce('ip', 'x', 0)
    members.hitOnce('ip', 'x', 1000)
    members.hitOnce('ip', 'y', 1000)
    assert.equal(members.blocked('ip', 1001), 1, "x counted again in the new window, then y: that window's two")
  })

  it('forgets ended windows once it holds 10,000 keys, and keeps the running ones', () => {
    const limiter = new RateLimiter({limit: 1, windowMs: 1000})
    for (let i = 0; i < 9_999; i++) limiter.hit(`old-${i}`, 0)
    limiter.hit('running', 500)
    assert.equal((limiter as unknown as {windows: Map<string, unknown>}).windows.size, 10_000)
    limiter.hit('new', 1200)
    const windows = (limiter as unknown as {windows: Map<string, unknown>}).windows
    assert.deepEqual([...windows.keys()].sort(), ['new', 'running'], 'the 9,999 ended windows are gone')
    assert.equal(limiter.blocked('running', 1300), 1)
  })
})
