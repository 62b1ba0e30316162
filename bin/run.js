#!/usr/bin/env node
import module from 'node:module'

// Node 22.1+ keeps V8's compiled code of the CLI between runs (in the OS temp folder), so a cold start skips most
// of the parsing of the bundled oclif and command code. Node 20 has no such cache: there the CLI keeps its own
// (src/cli/code-cache.ts).
module.enableCompileCache?.()
await import('../dist/cli/main.js')
