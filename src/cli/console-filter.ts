// bigint-buffer (under the Solana token library) warns on stderr at load time when its optional native addon is
// missing. gpunet denies that addon's build on purpose (its native code has a known overflow, GHSA-3gc7-fjrx-p6mg;
// the JavaScript fallback has not), so the warning would be noise on every command's stderr, in the build, whose
// `oclif manifest` step loads every command (scripts/build.js preloads this module there), and in the test run
// (.mocharc.json preloads it too).
/* eslint-disable no-console -- this is the one place that filters what libraries write to the console */
const warn = console.warn
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].startsWith('bigint: Failed to load bindings')) return
  warn(...args)
}
/* eslint-enable no-console */
