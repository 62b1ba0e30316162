/**
 * A follower's history goes in chunks with the loop yielded to between them (issue 42, finding 5: 16 MiB of
 * `/flog` history handed at once held the localnet 1.5 s), and what comes meanwhile follows it in order.
 */
import {strict as assert} from 'node:assert'
import {setImmediate as yieldToLoop} from 'node:timers/promises'

import {type FeedEntry, type Follower, JobFeed, REPLAY_CHUNK_BYTES} from '../../../src/lib/node/api-server/feed.js'
import type {StatusEntry} from '../../../src/lib/node-api/protocol.js'

/** A follower recording the seq of each entry it is handed; `accept` false from the `refuseAt`-th on. */
function recorder(kind: Follower['kind'] = 'flog', refuseAt = Infinity) {
  const seqs: number[] = []
  const drops: string[] = []
  const follower: Follower = {
    kind,
    matches: () => true,
    deliver(entry: FeedEntry | StatusEntry) {
      if (seqs.length >= refuseAt) return false
      seqs.push('seq' in entry ? entry.seq : entry.index)
      return true
    },
    drop: (reason) => void drops.push(reason),
  }
  return {follower, seqs, drops}
}

describe('job feed history replay', () => {
  const line = 'x'.repeat(1023)
  /** A feed holding 16 MiB of lines over two operations (8 MiB each, the per-operation cap). */
  function bigFeed(): {feed: JobFeed; lines: number} {
    const feed = new JobFeed('job')
    let lines = 0
    for (const op of ['a', 'b']) for (let i = 0; i < 8 * 1024; i++, lines++) feed.line(op, 'stdout', line)
    return {feed, lines}
  }

  it('hands one chunk at once and the rest on later turns of the loop, in order', async () => {
    const {feed, lines} = bigFeed()
    const {follower, seqs} = recorder()
    assert.equal(feed.follow(follower), true)
    const perChunk = Math.ceil(REPLAY_CHUNK_BYTES / 1023)
    assert.equal(seqs.length, perChunk, 'the first chunk only, before follow returns')
    let turns = 0
    while (seqs.length < lines) {
      await yieldToLoop()
      turns++
      assert.ok(turns < 10_000)
    }
    assert.ok(turns >= Math.floor(lines / perChunk) - 1, `${turns} turns of the loop`)
    assert.deepEqual(
      seqs,
      Array.from({length: lines}, (_, i) => i + 1),
    )
  })

  it('queues lines and states that come during the replay behind it', async () => {
    const {feed, lines} = bigFeed()
    const flog = recorder()
    const status = recorder('status')
    feed.status('running')
    feed.follow(flog.follower)
    feed.follow(status.follower)
    feed.line('a', 'stdout', 'live')
    feed.status('still running')
    while (flog.seqs.length < lines + 1) await yieldToLoop()
    assert.equal(flog.seqs.at(-1), lines + 1)
    assert.deepEqual(
      flog.seqs,
      [...flog.seqs].sort((a, b) => a - b),
    )
    assert.deepEqual(status.seqs, [0, 1])
  })

  it('stops the replay of a follower that cannot keep up, or leaves', async () => {
    const {feed} = bigFeed()
    const slow = recorder('flog', 300)
    feed.follow(slow.follower)
    const leaving = recorder()
    feed.follow(leaving.follower)
    feed.unfollow(leaving.follower)
    for (let i = 0; i < 100; i++) await yieldToLoop()
    assert.equal(slow.seqs.length, 300)
    assert.deepEqual(slow.drops, ['slow'])
    assert.equal(leaving.seqs.length, Math.ceil(REPLAY_CHUNK_BYTES / 1023))
  })
})
