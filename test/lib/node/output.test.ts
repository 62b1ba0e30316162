import {strict as assert} from 'node:assert'

import {MAX_LINE_BYTES} from '../../../src/lib/results/flow-state.js'
import {LogCollector} from '../../../src/lib/node/output.js'

type Push = ['stdout' | 'stderr', string]

function collect(chunks: Push[], limits = {lines: 100, bytes: 1 << 20}, redact: Record<string, string> = {}) {
  const collector = new LogCollector(limits, redact)
  for (const [type, chunk] of chunks) collector.push(type, Buffer.from(chunk))
  return collector.result()
}
const lines = (result: ReturnType<typeof collect>) => result.logs.map((entry) => [entry.type, entry.log])

describe('LogCollector', () => {
  it('makes lines across chunks, per stream, in the order they end, with the newline kept', () => {
    const result = collect([
      ['stdout', 'hel'],
      ['stderr', 'warn'],
      ['stdout', 'lo\nwor'],
      ['stderr', 'ing\n'],
      ['stdout', 'ld'],
    ])
    assert.deepEqual(lines(result), [
      ['stdout', 'hello\n'],
      ['stderr', 'warning\n'],
      ['stdout', 'world'],
    ])
    assert.ok(result.logs.every((entry) => !Number.isNaN(Date.parse(entry.timestamp))))
    assert.deepEqual([result.droppedLines, result.droppedBytes], [0, 0])
  })

  it('drops the oldest lines past the line cap and the byte cap, and counts them', () => {
    const many = collect(
      Array.from({length: 10}, (_, i): Push => ['stdout', `line${i}\n`]),
      {lines: 3, bytes: 1 << 20},
    )
    assert.deepEqual(
      lines(many).map(([, log]) => log),
      ['line7\n', 'line8\n', 'line9\n'],
    )
    assert.deepEqual([many.droppedLines, many.droppedBytes], [7, 42])
    const big = collect(
      Array.from({length: 10}, (): Push => ['stdout', '0123456789\n']),
      {lines: 100, bytes: 25},
    )
    assert.equal(big.logs.length, 2)
    assert.deepEqual([big.droppedLines, big.droppedBytes], [8, 88])
  })

  it('splits a run without newlines into lines of at most MAX_LINE_BYTES', () => {
    const result = collect([['stdout', 'x'.repeat(MAX_LINE_BYTES * 2 + 5)]])
    assert.deepEqual(
      result.logs.map((entry) => entry.log.length),
      [MAX_LINE_BYTES, MAX_LINE_BYTES, 5],
    )
  })

  const secret = 'TOPSECRET'
  for (const [name, chunks, expected] of [
    ['a value in one chunk', ['a TOPSECRET b\n'], 'a %%secrets.S%% b\n'],
    ['a value split over chunks', ['a TOPS', 'ECR', 'ET b\n'], 'a %%secrets.S%% b\n'],
    ['a value twice', ['TOPSECRETTOPSECRET\n'], '%%secrets.S%%%%secrets.S%%\n'],
    ['a value in an unfinished last line', ['end TOPSECRET'], 'end %%secrets.S%%'],
  ] as const) {
    it(`masks ${name}`, () => {
      const result = collect(
        chunks.map((chunk): Push => ['stdout', chunk]),
        undefined,
        {S: secret},
      )
      assert.equal(result.logs.map((entry) => entry.log).join(''), expected)
      assert.doesNotMatch(JSON.stringify(result), /TOPSECRET/)
    })
  }

  it('masks a secret that contains another as the longer one', () => {
    const result = collect([['stdout', 'key=abcdef\n']], undefined, {SHORT: 'abc', LONG: 'abcdef'})
    assert.equal(result.logs[0]!.log, 'key=%%secrets.LONG%%\n')
  })
})
