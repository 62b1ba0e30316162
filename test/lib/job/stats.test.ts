/**
 * `job stats` reading what a node sends (issue 40): untrusted answers are reduced to the TaskStat shape, and the
 * table shows each operation's latest sample, `-` for what is unknown.
 */
import {strict as assert} from 'node:assert'

import {parseStats, statsTable} from '../../../src/lib/job/stats.js'

const stat = (opId: string, timestamp: number, cpu: unknown) => ({
  opId,
  timestamp,
  cpu: {cpu_percent: cpu},
  memory: {memory_usage: 2048, memory_limit: null, memory_percent: null},
  disk: {read: 0, write: 1536},
  network: {received: null, sent: null},
})

describe('job stats: reading a node answer', () => {
  it('keeps the TaskStat shape: bad entries dropped, figures that are not finite numbers null', () => {
    const parsed = parseStats(JSON.stringify([stat('a', 1, 'lots'), {opId: 7}, null, 'x', {opId: 'b', cpu: 5}]))
    assert.equal(parsed.length, 2)
    assert.equal(parsed[0]!.cpu.cpu_percent, null)
    assert.deepEqual(parsed[1]!.memory, {memory_usage: null, memory_limit: null, memory_percent: null})
    assert.deepEqual(parseStats('{"not": "an array"}'), [])
    assert.throws(() => parseStats('<html>'), /not JSON/)
  })

  it("shows each operation's latest sample, `-` where unknown, no control characters", () => {
    const rows = statsTable(parseStats(JSON.stringify([stat('a', 2, 50), stat('a', 1, 10), stat('b\x1b[2J', 1, null)])))
    assert.equal(rows.length, 3)
    assert.match(rows[0]!, /^OPERATION +CPU %/)
    assert.match(rows[1]!, /^a +50\.0 +2\.0 KiB \/ - +- +0 B \/ 1\.5 KiB +- \/ -$/)
    assert.match(rows[2]!, /^b\?\[2J +- /)
    assert.match(statsTable([])[1]!, /no operation running/)
  })
})
