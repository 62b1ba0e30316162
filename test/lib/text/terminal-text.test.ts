import {strict as assert} from 'node:assert'

import {printable, stripControls} from '../../../src/lib/text/terminal-text.js'

describe('remote text at a terminal (terminal-text.ts)', () => {
  it('strips CSI, OSC, DCS and other ESC sequences, C0 and C1 controls and DEL; keeps tab, newline and text', () => {
    for (const [raw, shown] of [
      ['\x1b]0;window title\x07after', 'after'],
      ['\x1b]52;c;cm0gLXJmIH4=\x1b\\copied', 'copied'],
      ['\x1b[2K\x1b[1A\x1b[32m✔ passed\x1b[0m', '✔ passed'],
      ['\x1b[?1049h\x1b[38;2;1;2;3mrgb', 'rgb'],
      ['\x9b31mC1 CSI\x9d0;t\x9cend', 'C1 CSIend'],
      ['\x1bP1$r\x1b\\dcs', 'dcs'],
      ['\x1bcreset \x1b(Bcharset \x1b7saved', 'reset charset saved'],
      ['bell\x07 back\x08space\rreturn\x00nul\x7fdel\x85nel', 'bell backspacereturnnuldelnel'],
      ['a\tb\nc', 'a\tb\nc'],
      ['é ✔ 𝄞 \u00a0', 'é ✔ 𝄞 \u00a0'],
      ['unterminated \x1b]0;title to the end', 'unterminated '],
      ['lone escape at the end\x1b', 'lone escape at the end'],
    ]) {
      assert.equal(stripControls(raw!), shown, JSON.stringify(raw))
    }
  })

  it('strips only for a terminal: a pipe or a file gets the bytes as they came', () => {
    const raw = '\x1b]0;t\x07line\r'
    assert.equal(printable(raw, {isTTY: true}), 'line')
    assert.equal(printable(raw, {isTTY: false}), raw)
    assert.equal(printable(raw, {}), raw)
  })
})
