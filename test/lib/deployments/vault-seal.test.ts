/**
 * The vault key file: whoever reads it opens every vault the manager holds, so a file any other user (its group
 * included) may read is refused before the key is used, and a new one is written 0600.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {chmodSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {loadVaultKey} from '../../../src/lib/deployments/paying/vault-seal.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {tempDir} from '../../helpers/secrets.js'

describe('vault key file', () => {
  let dir: string
  let remove: () => Promise<void>
  beforeEach(async () => ({dir, remove} = await tempDir()))
  afterEach(() => remove())

  function keyFile(mode: number): {file: string; key: Buffer} {
    const file = join(dir, `vault-${mode.toString(8)}.key`)
    const key = randomBytes(32)
    writeFileSync(file, `${key.toString('base64')}\n`)
    // chmod, not writeFile's mode: the umask would take bits off.
    chmodSync(file, mode)
    return {file, key}
  }

  it('refuses a key file its group or others may read or write, naming the chmod that fixes it', async () => {
    for (const mode of [0o640, 0o620, 0o604, 0o602, 0o660, 0o644]) {
      const {file} = keyFile(mode)
      await assert.rejects(
        loadVaultKey(file),
        (e: unknown) =>
          e instanceof GpunetError &&
          e.code === 'key_file_exposed' &&
          e.exitCode === ExitCode.INVALID_INPUT &&
          e.hint === `run: chmod 600 ${file}`,
        `mode ${mode.toString(8)}`,
      )
    }
  })

  it('reads a key file only its owner may read, and writes a new one 0600', async () => {
    for (const mode of [0o600, 0o400]) {
      const {file, key} = keyFile(mode)
      assert.deepEqual(await loadVaultKey(file), key)
    }
    const made = join(dir, 'new.key')
    const key = await loadVaultKey(made, {create: true})
    assert.equal(key.length, 32)
    assert.equal(statSync(made).mode & 0o777, 0o600)
    assert.deepEqual(await loadVaultKey(made), key)
  })
})
