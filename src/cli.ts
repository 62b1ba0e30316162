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

/** oclif's version line, `gpunet/0.1.0 linux-x64 node-v20.20.2`, made without loading oclif. */
function versionLine(): string {
  const {name, version} = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as {
    name: string
    version: string
  }
  return `${name}/${version} ${process.platform}-${process.arch} node-${process.version}`
}

// `gpunet --version` answers before oclif loads: parsing oclif is most of what that command would cost.
const argv = process.argv.slice(2)
if (argv.length === 1 && argv[0] === '--version') {
  process.stdout.write(`${versionLine()}\n`)
} else {
  // oclif checks the Node version against its own package's engines when it loads, which costs a sixth of a
  // command's start (loading semver) and cannot work from a bundle (it looks for its package.json beside itself).
  // npm checks gpunet's engines at install time.
  process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
  await (await import('./oclif-main.js')).runOclif(import.meta.url)
}
