import {strict as assert} from 'node:assert'

import {codeFrame, FRAME_WIDTH} from '../../../src/lib/definition/frame.js'

describe('code frames', () => {
  it('marks the line and column with one line of context each side', () => {
    const text = 'line one\n  "imgae": "ubuntu",\nline three\nline four\n'
    assert.equal(
      codeFrame(text, 2, 3),
      ['  1 | line one', '> 2 |   "imgae": "ubuntu",', '    |   ^', '  3 | line three'].join('\n'),
    )
    assert.equal(codeFrame('only\n', 1, 1), ['> 1 | only', '    | ^', '  2 |'].join('\n'))
    assert.equal(codeFrame('a\r\nb\r\n', 2, 1), ['  1 | a', '> 2 | b', '    | ^', '  3 |'].join('\n'))
  })

  it('widens the gutter for line numbers of more digits', () => {
    const text = Array.from({length: 12}, (_, i) => `l${i + 1}`).join('\n')
    assert.equal(codeFrame(text, 10, 2), ['   9 | l9', '> 10 | l10', '     |  ^', '  11 | l11'].join('\n'))
  })

  it('clips a long line to a window around the column, with ellipses, and keeps the caret under the column', () => {
    const line = `${'a'.repeat(1000)}X${'b'.repeat(1000)}`
    const frame = codeFrame(line, 1, 1001).split('\n')
    const shown = frame[0]!.slice('> 1 | '.length)
    assert.equal(shown.length, FRAME_WIDTH + 2)
    assert.ok(shown.startsWith('…a') && shown.endsWith('b…'), shown)
    assert.equal(frame[1]!.indexOf('^'), frame[0]!.indexOf('X'))
    const start = codeFrame(line, 1, 1).split('\n')
    assert.match(start[0]!, /^> 1 \| a{160}…$/)
    assert.equal(start[1], '    | ^')
    const end = codeFrame(line, 1, 2001).split('\n')
    assert.match(end[0]!, /^> 1 \| …b{160}$/)
    assert.equal(end[1]!.indexOf('^'), end[0]!.length - 1)
  })

  it('shows control characters as U+FFFD so a frame never drives the terminal', () => {
    const frame = codeFrame('{"a": "\u001b[2J\u0007"}', 1, 7)
    assert.equal(frame.split('\n')[0], '> 1 | {"a": "\uFFFD[2J\uFFFD"}')
    // eslint-disable-next-line no-control-regex -- the point is that none is left
    assert.doesNotMatch(frame, /[\u0000-\u0008\u000b-\u001f]/)
  })

  it('stays small for a 50 MB line', () => {
    const text = `{"x": "${'A'.repeat(50_000_000)}"}`
    assert.ok(codeFrame(text, 1, 50_000_005).length < 400)
  })
})
