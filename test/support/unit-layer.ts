/**
 * Loaded by `npm run test:unit` only: the unit layer starts no process and opens no PostgreSQL. A test that tries
 * fails at once with where it belongs, rather than passing slowly (docs/development.md, "Test layers").
 */
import childProcess from 'node:child_process'
import {syncBuiltinESMExports} from 'node:module'

import {DATABASE_URL_ENV} from './env.js'

const NAMES = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const

/** tsx compiles the test files through esbuild's service binary: the one process this layer's runner may start. */
const isEsbuild = (command: unknown) => typeof command === 'string' && /esbuild/.test(command)

for (const name of NAMES) {
  const original = childProcess[name] as (...args: unknown[]) => unknown
  const guarded = (...args: unknown[]) => {
    if (isEsbuild(args[0])) return original(...args)
    throw new Error(
      `child_process.${name}(${String(args[0])}): the unit layer starts no process; a test that does is end-to-end (name its file *.e2e.test.ts)`,
    )
  }
  Object.defineProperty(childProcess, name, {value: guarded, writable: true, configurable: true})
}
// ES module imports of node:child_process read the patched functions from here on.
syncBuiltinESMExports()

// Without the variable the PostgreSQL suites would be declared as failures under CI=true, and skipped elsewhere:
// the structure test keeps them out of this layer, and nothing here can reach one.
delete process.env[DATABASE_URL_ENV]
