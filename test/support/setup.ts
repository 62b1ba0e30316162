/**
 * Loaded by every mocha process before any test file (`.mocharc.json`), each worker of a parallel run included.
 * What tests share is made safe by the resource: the shell's gpunet settings never reach a test, every process has
 * a HOME and XDG folders of its own, and (when PostgreSQL is given) a database of its own.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {holdDefaultPorts, releaseDefaultPorts} from './default-ports.js'
import {recordFileTime, startFileTime} from './file-times.js'
import {dropTestDatabases, ownTestDatabase} from './postgres.js'

// A GPUNET_* variable of the shell running the tests (an exported GPUNET_GATEWAY_PORT, say) would change what the
// CLI and the library resolve; the tests' own knobs are GPUNET_TEST_*.
for (const name of Object.keys(process.env)) {
  if (name.startsWith('GPUNET_') && !name.startsWith('GPUNET_TEST_')) delete process.env[name]
}

const home = mkdtempSync(join(tmpdir(), 'gpunet-test-home-'))
process.env.HOME = home
for (const [name, folder] of [
  ['XDG_CONFIG_HOME', 'config'],
  ['XDG_DATA_HOME', 'data'],
  ['XDG_CACHE_HOME', 'cache'],
  ['XDG_STATE_HOME', 'state'],
] as const) {
  process.env[name] = join(home, folder)
}
process.on('exit', () => rmSync(home, {recursive: true, force: true}))

let database: Promise<void> | undefined

/** Root hooks: run around each file in a parallel worker, around the whole run in a serial one. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    startFileTime(this)
    // Made on first use, so a process that runs no test (the parallel run's parent) makes none.
    database ??= ownTestDatabase()
    await database
  },
  afterAll(this: Mocha.Context) {
    recordFileTime(this)
  },
}

/** In the run's parent, before any test: the default ports held, leftovers of an earlier, killed run dropped. */
export async function mochaGlobalSetup(): Promise<void> {
  await holdDefaultPorts()
  await dropTestDatabases()
}

/** The databases of this run's processes go when the run ends (in the parent, after every worker). */
export async function mochaGlobalTeardown(): Promise<void> {
  await releaseDefaultPorts()
  await dropTestDatabases()
}
