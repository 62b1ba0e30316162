/**
 * Code frames under `job validate` errors: the offending line with one line of context and a caret. Long lines
 * are clipped to a window around the column, so the output stays small whatever the file holds (a 50 MB
 * one-line file prints a few hundred characters, not the file).
 */

/** Characters of a line shown at most (without the ellipses). */
export const FRAME_WIDTH = 160

const ELLIPSIS = '…'

/** A frame of `text` at a 1-based line and column, Babel-style: `> 9 |` marks the line, `|   ^` the column. */
export function codeFrame(text: string, line: number, column: number): string {
  const first = Math.max(1, line - 1)
  const lines = linesOf(text, first, line + 1)
  const last = first + lines.length - 1
  const width = String(last).length
  // One window for every line of the frame, so the context lines stay aligned with the marked one.
  const start = windowStart(lines[line - first]?.length ?? 0, column)
  const out: string[] = []
  lines.forEach((content, i) => {
    const number = first + i
    const shown = clip(content, start)
    const gutter = `${number === line ? '>' : ' '} ${String(number).padStart(width)} |`
    out.push(shown ? `${gutter} ${shown}` : gutter)
    if (number === line) {
      const before = clip(content, start).slice(0, Math.max(0, column - 1 - start + (start > 0 ? 1 : 0)))
      out.push(`  ${' '.repeat(width)} | ${before.replace(/[^\t]/g, ' ')}^`)
    }
  })
  return out.join('\n')
}

/** Lines `from` to `to` (1-based, inclusive) of `text`, found without splitting the whole text. */
function linesOf(text: string, from: number, to: number): string[] {
  let offset = 0
  for (let n = 1; n < from; n++) {
    const next = text.indexOf('\n', offset)
    if (next === -1) return []
    offset = next + 1
  }
  const lines: string[] = []
  for (let n = from; n <= to && offset <= text.length; n++) {
    const end = text.indexOf('\n', offset)
    lines.push(text.slice(offset, end === -1 ? text.length : end).replace(/\r$/, ''))
    if (end === -1) break
    offset = end + 1
  }
  return lines
}

/** Where the window of a line of `length` starts so that `column` sits in it, about in the middle. */
function windowStart(length: number, column: number): number {
  if (length <= FRAME_WIDTH) return 0
  return Math.max(0, Math.min(column - 1 - FRAME_WIDTH / 2, length - FRAME_WIDTH))
}

/** The window of a line from `start`, with an ellipsis on each clipped side and control characters made visible. */
function clip(content: string, start: number): string {
  if (content.length <= FRAME_WIDTH && start === 0) return printable(content)
  const piece = content.slice(start, start + FRAME_WIDTH)
  const head = start > 0 ? ELLIPSIS : ''
  const tail = start + FRAME_WIDTH < content.length ? ELLIPSIS : ''
  return `${head}${printable(piece)}${tail}`
}

/** Control characters (other than tab) would move the cursor or recolor a terminal: shown as U+FFFD. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '\uFFFD')
}
