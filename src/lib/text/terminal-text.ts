/**
 * Text from a node, a gateway or a service, made harmless for a terminal: a line of a job's output may hold escape
 * sequences that set the window title, write the clipboard (OSC 52), erase lines or fake our own output. Every
 * print path of remote text goes through `printable`; `--json` and `--out` keep the bytes exact.
 */

// CSI (ESC [ or the C1 byte 0x9B) with its parameters; OSC, DCS, SOS, PM and APC strings up to their terminator
// (BEL, ST as ESC \ or 0x9C) or the end of the text, where a terminal would swallow the rest; any other ESC
// sequence; then every C0 and C1 control byte and DEL, except tab and newline.
const CONTROL_SEQUENCES = new RegExp(
  [
    '(?:\\x1b\\[|\\x9b)[\\x30-\\x3f]*[\\x20-\\x2f]*[\\x40-\\x7e]?',
    '(?:\\x1b[\\]PX^_]|[\\x90\\x98\\x9d\\x9e\\x9f])[\\s\\S]*?(?:\\x07|\\x1b\\\\|\\x9c|$)',
    '\\x1b[\\x20-\\x2f]*[\\x30-\\x7e]?',
    '[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]',
  ].join('|'),
  'g',
)

/** `text` without terminal control sequences and control characters (tab and newline are kept). */
export function stripControls(text: string): string {
  return text.replace(CONTROL_SEQUENCES, '')
}

/** Remote text as it may be written to `stream`: stripped of control sequences when the stream is a terminal. */
export function printable(text: string, stream: {isTTY?: boolean}): string {
  return stream.isTTY ? stripControls(text) : text
}
