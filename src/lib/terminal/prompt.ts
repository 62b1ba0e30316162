import {createInterface, type Interface} from 'node:readline/promises'
import {Writable} from 'node:stream'

import {ExitCode, GpunetError} from '../errors.js'

/** True when a person can answer a question: standard input and standard error are terminals. */
export function canPrompt(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY)
}

/** The user said no or pressed Ctrl+C / Ctrl+D: "Cancelled." (or what was spared) and exit 130. */
export function cancelled(message = 'Cancelled.'): GpunetError {
  return new GpunetError('cancelled', message, {exitCode: ExitCode.CANCELLED})
}

/** Asks on stderr and reads one line without echoing it (for secret values typed at a terminal). */
export async function askHidden(question: string): Promise<string> {
  // Echo goes to a stream that drops it, so the value never shows on screen. The interface switches the
  // terminal to raw mode, so it must exist before the question shows, or a quick typist's input is echoed.
  const silent = new Writable({write: (_chunk, _encoding, done) => done()})
  const rl = createInterface({input: process.stdin, output: silent, terminal: true})
  process.stderr.write(question)
  try {
    return await ask(rl, '')
  } finally {
    rl.close()
    process.stderr.write('\n')
  }
}

/** Asks a yes/no question on stderr; only "y" or "yes" count as yes. */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({input: process.stdin, output: process.stderr})
  try {
    return /^y(es)?$/i.test((await ask(rl, `${question} [y/N] `)).trim())
  } catch (error) {
    process.stderr.write('\n')
    throw error
  } finally {
    rl.close()
  }
}

/**
 * Confirms what cannot be undone: asks `question` at a terminal ("no" is `cancelled(spared)`, exit 130); without
 * one refuses with exit 2 (`refusing to <doing> without a terminal`), as a script must pass --yes.
 */
export async function confirmUndoable(what: {
  question: string
  /** What is refused, e.g. "wipe the localnet in DIR". */
  doing: string
  /** The same in short, for the hint: "wipe it". */
  short: string
  /** The message of a "no". */
  spared: string
}): Promise<void> {
  if (!canPrompt()) {
    throw new GpunetError('confirmation_required', `refusing to ${what.doing} without a terminal to confirm`, {
      exitCode: ExitCode.USAGE,
      hint: `pass --yes to ${what.short} from a script`,
    })
  }
  if (!(await confirm(what.question))) throw cancelled(what.spared)
}

/** One answer; Ctrl+C (SIGINT on the interface, the terminal being raw) or Ctrl+D (end of input) cancel. */
function ask(rl: Interface, question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    rl.once('SIGINT', () => reject(cancelled()))
    rl.once('close', () => reject(cancelled()))
    rl.question(question).then(resolve, () => reject(cancelled()))
  })
}
