import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {readFile, stat} from 'node:fs/promises'
import {join} from 'node:path'

import {isGpunetError} from '../../../../src/lib/errors.js'
import {deriveKey, loadMasterKey, SecretCipher} from '../../../../src/lib/secrets/service/crypto.js'
import {tempDir} from '../../../helpers/secrets.js'

describe('secrets crypto', () => {
  it('seals with a fresh IV and opens only for the same owner and name', () => {
    const cipher = new SecretCipher(randomBytes(32))
    const a = cipher.seal('owner', 'NAME', 'value')
    const b = cipher.seal('owner', 'NAME', 'value')
    assert.notDeepEqual(a, b)
    assert.equal(cipher.open('owner', 'NAME', a), 'value')
    assert.throws(() => cipher.open('other', 'NAME', a))
    assert.throws(() => cipher.open('owner', 'OTHER', a))
    const tampered = Buffer.from(a)
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 1
    assert.throws(() => cipher.open('owner', 'NAME', tampered))
    assert.throws(() => new SecretCipher(randomBytes(32)).open('owner', 'NAME', a))
  })

  it('derives different keys for values and tokens', () => {
    const master = randomBytes(32)
    assert.notDeepEqual(deriveKey(master, 'secret-values'), deriveKey(master, 'login-tokens'))
    assert.notDeepEqual(deriveKey(master, 'secret-values'), master)
  })

  it('creates the key file with mode 0600 on first start and reads it back after', async () => {
    const {dir, remove} = await tempDir()
    try {
      const file = join(dir, 'sub', 'secrets.key')
      const key = await loadMasterKey(file, {})
      assert.equal(key.length, 32)
      assert.equal((await stat(file)).mode & 0o777, 0o600)
      assert.deepEqual(await loadMasterKey(file, {}), key)
      assert.equal(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64').length, 32)
    } finally {
      await remove()
    }
  })

  it('prefers GPUNET_SECRETS_KEY in base64 or hex, and refuses a key of the wrong size', async () => {
    const key = randomBytes(32)
    assert.deepEqual(await loadMasterKey('/nonexistent/key', {GPUNET_SECRETS_KEY: key.toString('base64')}), key)
    assert.deepEqual(await loadMasterKey('/nonexistent/key', {GPUNET_SECRETS_KEY: key.toString('hex')}), key)
    await assert.rejects(
      loadMasterKey('/nonexistent/key', {GPUNET_SECRETS_KEY: 'c2hvcnQ='}),
      (error) => isGpunetError(error) && error.code === 'key_invalid',
    )
  })
})
