/**
 * The master key's hex form read exactly (issue 26, secrets survivors): 64 hex digits are one key, and one digit
 * more at either end is no key at all. Node decodes an odd count of hex digits by dropping the last one, so a
 * check that looked at only one end of the text would take 65 digits as a key it silently cut.
 */
import {strict as assert} from 'node:assert'
import {rmSync} from 'node:fs'
import {join} from 'node:path'

import {loadMasterKey} from '../../../../src/lib/secrets/service/index.js'
import {tempDir} from '../../../helpers/files.js'

const KEY = Buffer.alloc(32, 0xab)

describe('secrets service: a master key of hex digits', () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir('gpunet-key-')
  })
  afterEach(() => rmSync(dir, {recursive: true, force: true}))

  it('refuses 65 hex digits, the extra one before or after the 64 of a key (exit 3)', async () => {
    const hex = KEY.toString('hex')
    assert.deepEqual(await loadMasterKey(join(dir, 'x'), {GPUNET_SECRETS_KEY: hex}), KEY, '64 digits are the key')
    for (const text of [`0${hex}`, `${hex}0`]) {
      await assert.rejects(
        loadMasterKey(join(dir, 'x'), {GPUNET_SECRETS_KEY: text}),
        (error: {code?: string; message?: string; exitCode?: number}) =>
          error.code === 'key_invalid' &&
          error.message === 'the secretsKey setting (GPUNET_SECRETS_KEY) does not hold a 32-byte key' &&
          error.exitCode === 3,
        text,
      )
    }
  })
})
