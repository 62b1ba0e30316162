/**
 * Bounds of the secrets service (issue 26, secrets survivors): a login token lives at most an hour whatever the
 * settings say; a sealed value of another format, or too short to hold its IV and tag, is refused before AES-GCM;
 * the storage's errors carry names a log can tell apart.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'

import {SecretCipher} from '../../../../src/lib/secrets/service/crypto.js'
import {QuotaError, StorageBusyError} from '../../../../src/lib/secrets/service/storage.js'
import {login, newWallet, sqliteAdapter, startService} from '../../../helpers/secrets.js'

/** The claims of a JWT, read without checking it (the service checks it). */
const claims = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as {iat: number; exp: number}

describe('secrets service: bounds', () => {
  it('issues login tokens for an hour at most, even when its settings ask for more', async () => {
    const long = await startService(sqliteAdapter, {limits: {tokenTtlSeconds: 7200}})
    const short = await startService(sqliteAdapter, {limits: {tokenTtlSeconds: 60}})
    try {
      const capped = claims(await login(long.url, newWallet()))
      assert.equal(capped.exp - capped.iat, 3600)
      const asked = claims(await login(short.url, newWallet()))
      assert.equal(asked.exp - asked.iat, 60)
    } finally {
      await long.stop()
      await short.stop()
    }
  })

  it('refuses a sealed value of another format or too short for its IV and tag, before decrypting', () => {
    const cipher = new SecretCipher(randomBytes(32))
    const sealed = cipher.seal('owner', 'NAME', 'value')
    assert.equal(cipher.open('owner', 'NAME', sealed), 'value')
    const otherFormat = Buffer.from(sealed)
    otherFormat[0] = otherFormat[0]! + 1
    assert.throws(() => cipher.open('owner', 'NAME', otherFormat), {message: 'unknown sealed value format'})
    // Format byte, 12 bytes of IV, 16 of tag: one byte short of an empty value.
    assert.throws(() => cipher.open('owner', 'NAME', sealed.subarray(0, 28)), {message: 'unknown sealed value format'})
    assert.equal(cipher.open('owner', 'EMPTY', cipher.seal('owner', 'EMPTY', '')), '')
  })

  it('names its storage errors', () => {
    assert.equal(new QuotaError('totalBytes', 10).name, 'QuotaError')
    assert.equal(new StorageBusyError().name, 'StorageBusyError')
  })
})
