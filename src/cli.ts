import {execute} from '@oclif/core'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {packageRoot} from './lib/package-root.js'

// bigint-buffer (under the Solana token library) warns on stderr at load time when its optional native addon is
// missing. gpunet denies that addon's build on purpose (its native code has a known overflow, GHSA-3gc7-fjrx-p6mg;
// the JavaScript fallback has not), so the warning would be noise on every command's stderr.
/* eslint-disable no-console -- this is the one place that filters what libraries write to the console */
const warn = console.warn
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].startsWith('bigint: Failed to load bindings')) return
  warn(...args)
}
/* eslint-enable no-console */

/** `gpunet --version --json`: oclif prints its user agent line only, so the document is made here. */
function printVersionJson(): void {
  const {name, version} = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as {
    name: string
    version: string
  }
  const document = {name, version, node: process.version, platform: process.platform, arch: process.arch}
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`)
}

const argv = process.argv.slice(2)
/** Runs the gpunet CLI; bin/run.js loads the bundled copy of this file. */
if (
  argv.includes('--version') &&
  argv.includes('--json') &&
  argv.every((arg) => arg === '--version' || arg === '--json')
)
  printVersionJson()
else await execute({dir: import.meta.url})
