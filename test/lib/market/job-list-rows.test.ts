/** `job list`'s columns: aligned whatever the addresses' lengths (43 or 44), and whatever an indexer puts in them. */
import {strict as assert} from 'node:assert'

import {jobListRows, type ListedJob} from '../../../src/lib/market/jobs/job-list.js'
import {stripControls} from '../../../src/lib/text/terminal-text.js'

const row = (job: string, market: string, outcome: ListedJob['outcome'] = null): ListedJob => ({
  job,
  state: 'COMPLETED',
  outcome,
  market,
  node: null,
  startedAt: '2026-11-25T10:00:00.000Z',
  durationSeconds: 60,
  cost: {amount: 0.006, unit: 'token', baseUnits: '6000'},
  definition: 'Qm',
  result: null,
})

/** Where each column starts in each line: the header's words and the cells under them. */
function starts(lines: string[]): number[][] {
  return lines.map((line) => [...line.matchAll(/(?:^| {2})(\S)/g)].map((m) => m.index! + m[0].length - 1))
}

describe('job list rows', () => {
  it('line up for 43- and 44-character addresses, the outcome after the state', () => {
    const lines = jobListRows([row('A'.repeat(43), 'M'.repeat(44), 'stopped'), row('B'.repeat(44), 'N'.repeat(43))])
    assert.match(lines[0]!, /^ADDRESS +STATE +OUTCOME +MARKET +START +DURATION +COST$/)
    const [header, ...rest] = starts(lines)
    for (const cells of rest) assert.deepEqual(cells, header)
  })

  it("line up on a terminal when an indexer's cell holds control sequences, measured as printed", () => {
    const lines = jobListRows(
      [row('A'.repeat(44), '\u001b[31mM\u001b[0m' + 'M'.repeat(42)), row('B'.repeat(43), 'N'.repeat(44))],
      stripControls,
    )
    assert.ok(lines.every((line) => !line.includes('\u001b')))
    const [header, ...rest] = starts(lines)
    for (const cells of rest) assert.deepEqual(cells, header)
  })
})
