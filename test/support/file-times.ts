/**
 * Each test file's wall time in a parallel run (hooks included), appended as a JSON line to the file that
 * `GPUNET_TEST_TIMES` names: `npm run test:times` prints the slowest. In a serial run the root hooks wrap the
 * whole run, so nothing is recorded there.
 */
import {appendFileSync} from 'node:fs'

let started: {file: string; at: number} | undefined

/** The one file this root suite holds, or undefined (a serial run's root holds them all). */
function fileOf(context: Mocha.Context): string | undefined {
  const files = new Set(context.test?.parent?.suites.map((suite) => suite.file))
  return files.size === 1 ? [...files][0] : undefined
}

/** Notes when a file's tests begin. */
export function startFileTime(context: Mocha.Context): void {
  const file = fileOf(context)
  started = file && process.env.GPUNET_TEST_TIMES ? {file, at: Date.now()} : undefined
}

/** Appends the file's time, once its tests and hooks are done. */
export function recordFileTime(context: Mocha.Context): void {
  const target = process.env.GPUNET_TEST_TIMES
  if (!started || !target || fileOf(context) !== started.file) return
  appendFileSync(target, `${JSON.stringify({file: started.file, ms: Date.now() - started.at})}\n`)
  started = undefined
}
