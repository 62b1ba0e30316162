#!/usr/bin/env node
import module from 'node:module'
import v8 from 'node:v8'

if (module.enableCompileCache) {
  // Node 22.1+ keeps V8's compiled code of the CLI between runs (in the OS temp folder), so a cold start skips most
  // of the parsing of the bundled oclif and command code.
  module.enableCompileCache()
} else {
  // Node 20 has no such cache, and compiles undici's HTTP parser (WebAssembly) twice: at once with its baseline
  // compiler, then again in the background with its optimizing one, which a short command never profits from and
  // waits for at exit: 10 to 15% of the instructions of `job post` (docs/development.md). Set before any
  // WebAssembly is compiled. Not on Node 22+, where changing a flag would cost more than it saves (its compile
  // cache and built-in code are tied to the flags it started with).
  v8.setFlagsFromString('--liftoff-only')
}
await import('../dist/cli.js')
