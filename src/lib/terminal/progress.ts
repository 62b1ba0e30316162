/** Progress on stderr: an ora spinner on a terminal, plain lines otherwise (logs, CI, pipes). */
import type {Ora} from 'ora'

import {stderrColors} from './colors.js'

export interface Progress {
  /** Shows the current step. */
  update(text: string): void
  /** Prints a line above the progress display (a job's output while it is followed). */
  print(line: string): void
  /** Ends the progress display. */
  stop(): void
}

// ora's braille dots; colored here rather than by ora, which colors with chalk's stdout-based default and
// does not read NO_COLOR.
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

/** Starts showing progress on stderr. */
export function startProgress(text: string): Progress {
  // A terminal of zero columns (a pseudo-terminal nobody sized) would make ora clear lines without end.
  if (process.stderr.isTTY && process.stderr.columns > 0) return spinnerProgress(text)
  let shown = text
  process.stderr.write(`${text}\n`)
  const update = (next: string) => {
    // Plain lines only when something changed: a log should not repeat the same status.
    if (next !== shown) process.stderr.write(`${(shown = next)}\n`)
  }
  return {update, print: (line) => process.stderr.write(`${line}\n`), stop: () => {}}
}

/**
 * An ora spinner, loaded only here: ora measures text with string-width, whose loading builds an Intl.Segmenter
 * (ICU data), 15 to 30 ms of `gpunet job post` that a run without a terminal never needed. The
 * spinner starts as soon as ora has loaded (a tick later), with the latest text.
 */
function spinnerProgress(text: string): Progress {
  let spinner: Ora | undefined
  let current = text
  let stopped = false
  void import('ora').then(({default: ora}) => {
    if (stopped) return
    spinner = ora({
      text: current,
      stream: process.stderr,
      color: false,
      spinner: {interval: 80, frames: FRAMES.map((frame) => stderrColors.cyan(frame))},
    }).start()
  })
  return {
    update: (next) => {
      current = next
      if (spinner) spinner.text = next
    },
    print: (line) => {
      spinner?.clear()
      process.stderr.write(`${line}\n`)
      spinner?.render()
    },
    stop: () => {
      stopped = true
      spinner?.stop()
    },
  }
}
