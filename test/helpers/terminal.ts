import {spawn, spawnSync} from 'node:child_process'

import {BIN} from './cli.js'

/** util-linux `script` gives a command a pseudo-terminal; without it the terminal tests cannot run. */
export const hasScript = spawnSync('script', ['--version']).status === 0

/**
 * `describe` for suites that need a terminal: skipped with a notice when `script` is missing, and failing
 * instead under CI=true, where a skipped suite would pass unnoticed.
 */
export function describeAtTerminal(title: string, body: (this: Mocha.Suite) => void): void {
  if (hasScript) return void describe(title, body)
  if (process.env.CI === 'true') {
    describe(title, () => {
      it('needs util-linux `script` under CI=true', () => {
        throw new Error('util-linux `script` is required under CI=true for the terminal tests')
      })
    })
    return
  }
  process.stderr.write(`\n!!! SKIPPING "${title}": util-linux \`script\` is not installed.\n`)
  describe.skip(title, body)
}

/**
 * Runs gpunet in a pseudo-terminal (util-linux `script`) and, once `prompt` shows, types `keys` as they are
 * (e.g. "y\r", or "\x03" for Ctrl+C, "\x04" for Ctrl+D), so terminal-only behaviour (hidden input,
 * confirmation, cancelling) is exercised as a person meets it.
 */
export function runInTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  prompt?: string,
  keys?: string,
): Promise<{code: number | null; output: string}> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ')
  const child = spawn('script', ['-qec', command, '/dev/null'], {env: {...process.env, NO_COLOR: '1', ...env}})
  let output = ''
  let typed = false
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    output += d
    if (prompt && keys !== undefined && !typed && output.includes(prompt)) {
      typed = true
      child.stdin.write(keys)
    }
  })
  return new Promise((resolve) => child.on('close', (code) => resolve({code, output})))
}

/** Whether terminal output holds a control character (C0 but tab and newline, DEL, C1), a pseudo-terminal's CRLF aside. */
export function hasControls(output: string): boolean {
  for (const char of output.replaceAll('\r\n', '\n')) {
    const code = char.codePointAt(0)!
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f)) return true
  }
  return false
}
