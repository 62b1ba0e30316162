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

describe('code frames: edges', () => {
  it('sizes the gutter by the last line shown, not past it', () => {
    const text = Array.from({length: 9}, (_, i) => `l${i + 1}`).join('\n')
    assert.equal(codeFrame(text, 8, 2), ['  7 | l7', '> 8 | l8', '    |  ^', '  9 | l9'].join('\n'))
  })

  it('is empty for a line past the end of the text', () => {
    assert.equal(codeFrame('a\n', 5, 1), '')
    assert.equal(codeFrame('a', 3, 1), '')
  })

  it('drops only the carriage return that ends a line; one inside it shows as U+FFFD', () => {
    assert.equal(codeFrame('x\ry\r\n', 1, 1), ['> 1 | x\uFFFDy', '    | ^', '  2 |'].join('\n'))
  })

  it('shows a line of exactly FRAME_WIDTH characters whole, and clips one character more', () => {
    const full = 'c'.repeat(FRAME_WIDTH)
    assert.equal(codeFrame(full, 1, FRAME_WIDTH), `> 1 | ${full}\n    | ${' '.repeat(FRAME_WIDTH - 1)}^`)
    assert.equal(codeFrame(`${full}d`, 1, 1).split('\n')[0], `> 1 | ${full}…`)
  })

  it('centres the window on the column: half the width before it', () => {
    const line = Array.from({length: 2001}, (_, i) => String(i % 10)).join('')
    const [shown, caret] = codeFrame(line, 1, 1001).split('\n')
    assert.equal(shown, `> 1 | …${line.slice(920, 1080)}…`)
    assert.equal(caret, `    | ${' '.repeat(81)}^`)
  })

  it('clips short context lines by the same window as the long marked line, so columns stay aligned', () => {
    const long = 'L'.repeat(2001)
    const frame = codeFrame(`short\n${long}\nend`, 2, 1001).split('\n')
    assert.deepEqual(frame, ['  1 | …', `> 2 | …${'L'.repeat(FRAME_WIDTH)}…`, `    | ${' '.repeat(81)}^`, '  3 | …'])
  })
})
