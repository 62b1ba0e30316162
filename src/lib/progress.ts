/** Progress on stderr: an ora spinner on a terminal, plain lines otherwise (logs, CI, pipes). */
import ora from 'ora'

export interface Progress {
  /** Shows the current step. */
  update(text: string): void
  /** Ends the progress display. */
  stop(): void
}

/** Starts showing progress on stderr. */
export function startProgress(text: string): Progress {
  if (process.stderr.isTTY) {
    const spinner = ora({text, stream: process.stderr}).start()
    return {update: (next) => (spinner.text = next), stop: () => spinner.stop()}
  }
  let shown = text
  process.stderr.write(`${text}\n`)
  const update = (next: string) => {
    // Plain lines only when something changed: a log should not repeat the same status.
    if (next !== shown) process.stderr.write(`${(shown = next)}\n`)
  }
  return {update, stop: () => {}}
}
