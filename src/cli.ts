import {serveWithoutOclif} from './fast-start.js'

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

const argv = process.argv.slice(2)
if (!(await serveWithoutOclif(argv))) {
  // oclif checks the Node version against its own package's engines when it loads, which costs a sixth of a
  // command's start (loading semver) and cannot work from a bundle (it looks for its package.json beside itself).
  // npm checks gpunet's engines at install time.
  process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
  await (await import('./oclif-main.js')).runOclif(import.meta.url)
}
