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

/** The package's name and version, read without loading oclif. */
function packageVersion(): {name: string; version: string} {
  const {name, version} = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as {
    name: string
    version: string
  }
  return {name, version}
}

// `gpunet --version` (and `--version --json`, one document) answers before oclif loads: parsing oclif is most of
// what that command would cost.
const argv = process.argv.slice(2)
const versionOnly = argv.includes('--version') && argv.every((arg) => arg === '--version' || arg === '--json')
if (versionOnly && argv.includes('--json')) {
  const {name, version} = packageVersion()
  const document = {name, version, node: process.version, platform: process.platform, arch: process.arch}
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`)
} else if (versionOnly) {
  const {name, version} = packageVersion()
  process.stdout.write(`${name}/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else {
  // oclif checks the Node version against its own package's engines when it loads, which costs a sixth of a
  // command's start (loading semver) and cannot work from a bundle (it looks for its package.json beside itself).
  // npm checks gpunet's engines at install time.
  process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
  await (await import('./oclif-main.js')).runOclif(import.meta.url)
}
