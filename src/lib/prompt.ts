import {createInterface} from 'node:readline/promises'
import {Writable} from 'node:stream'

/** True when a person can answer a question: standard input and standard error are terminals. */
export function canPrompt(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY)
}

/** Asks on stderr and reads one line without echoing it (for secret values typed at a terminal). */
export async function askHidden(question: string): Promise<string> {
  // Echo goes to a stream that drops it, so the value never shows on screen. The interface switches the
  // terminal to raw mode, so it must exist before the question shows, or a quick typist's input is echoed.
  const silent = new Writable({write: (_chunk, _encoding, done) => done()})
  const rl = createInterface({input: process.stdin, output: silent, terminal: true})
  process.stderr.write(question)
  try {
    return await rl.question('')
  } finally {
    rl.close()
    process.stderr.write('\n')
  }
}

/** Asks a yes/no question on stderr; only "y" or "yes" count as yes. */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({input: process.stdin, output: process.stderr})
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim())
  } finally {
    rl.close()
  }
}
