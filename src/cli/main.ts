import './console-filter.js'

import module from 'node:module'

import {serveWithoutOclif} from './fast-start.js'
import {watchOutputClosed} from '../lib/terminal/output-closed.js'
import {packageRoot} from '../lib/package-root.js'

const argv = process.argv.slice(2)
// `gpunet ... | head -1`: a write after the reader left is dropped, not a stack trace; a follower learns of it
// even when it has nothing to write.
watchOutputClosed({probeReaders: true})
// Once nothing is left to do, exit at once: Node's own way out then waits for V8's background compiler tasks and
// tears down the heap, 30 to 70 ms after `gpunet job post` has written its answer (seen with strace). Only when no
// other code waits for that moment (pino flushes its logs there, in the servers).
process.on('beforeExit', function exitNow(code) {
  if (process.listenerCount('beforeExit') === 1) process.exit(code)
})
if (!(await serveWithoutOclif(argv))) {
  // oclif checks the Node version against its own package's engines when it loads, which costs a sixth of a
  // command's start (loading semver) and cannot work from a bundle (it looks for its package.json beside itself).
  // npm checks gpunet's engines at install time.
  process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
  if ((module as {enableCompileCache?: unknown}).enableCompileCache) {
    await (await import('./oclif-main.js')).runOclif(import.meta.url)
  } else {
    // Node 20: one bundle of oclif and the commands, with a code cache (src/cli/code-cache.ts).
    await (await import('./code-cache.js')).runBundledCli(packageRoot(), argv)
  }
}
