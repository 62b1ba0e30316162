/**
 * checkSecretsStored against a real secrets service on 127.0.0.1 (before issue 26 only `job post` end-to-end
 * tests looked at what it says about the secrets a job refers to and the poster has not stored).
 */
import {strict as assert} from 'node:assert'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'

import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import {isGpunetError} from '../../../src/lib/errors.js'
import {checkSecretsStored} from '../../../src/lib/job/preflight.js'
import {resolveSettings} from '../../../src/lib/settings.js'
import {SecretsClient} from '../../../src/lib/secrets/client.js'
import {newWallet, sqliteAdapter, startService, tempDir} from '../../helpers/secrets.js'

/** A container job whose environment refers to the secrets `names`. */
function referring(names: string[]): JobDefinition {
  return {
    version: '0.1',
    type: 'container',
    ops: [
      {
        id: 'run',
        type: 'container/run',
        args: {
          image: 'docker.io/library/ubuntu:24.04',
          env: Object.fromEntries(names.map((n) => [`V_${n}`, `%%secrets.${n}%%`])),
        },
      },
    ],
  } as unknown as JobDefinition
}

describe('checkSecretsStored (job post)', function () {
  this.timeout(30_000)
  let service: Awaited<ReturnType<typeof startService>>
  let dir: {dir: string; remove: () => Promise<void>}
  let walletFile: string
  const saved = process.env.XDG_CONFIG_HOME

  before(async () => {
    service = await startService(sqliteAdapter)
    dir = await tempDir()
    // The client's token cache goes to the temporary folder, not the user's.
    process.env.XDG_CONFIG_HOME = join(dir.dir, 'config')
    const wallet = newWallet()
    walletFile = join(dir.dir, 'wallet.json')
    await writeFile(walletFile, JSON.stringify([...wallet.bytes]))
    await new SecretsClient({url: service.url, wallet, cache: null}).set({STORED: 'value'})
  })
  after(async () => {
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME
    else process.env.XDG_CONFIG_HOME = saved
    await service.stop()
    await dir.remove()
  })

  const check = (names: string[], options: {network?: 'localnet' | 'devnet'; url?: string; wallet?: string} = {}) =>
    checkSecretsStored(
      referring(names),
      resolveSettings({
        network: options.network ?? 'localnet',
        flags: {secretsUrl: options.url ?? service.url, wallet: options.wallet ?? walletFile},
      }),
      {note: () => {}},
    )
  const SKIP = 'pass --no-secrets-check to post without checking (the job fails on the node if one is missing)'

  it('answers the names referred to when every one is stored', async () => {
    assert.deepEqual(await check(['STORED']), ['STORED'])
    assert.deepEqual(await check([]), [])
  })

  it('names the one missing secret, in the singular, with exit 3', async () => {
    await assert.rejects(check(['STORED', 'ONLY']), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.equal(error.code, 'secret_missing')
      assert.equal(error.exitCode, 3)
      assert.equal(error.message, 'the job refers to a secret you have not stored on localnet: ONLY')
      assert.match(error.hint ?? '', /^store it with `gpunet secrets set ONLY`/)
      assert.deepEqual(error.fields, {missing: ['ONLY']})
      return true
    })
  })

  it('names every missing secret, in the plural, and only those', async () => {
    await assert.rejects(check(['FIRST', 'STORED', 'SECOND']), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.equal(error.exitCode, 3)
      assert.equal(error.message, 'the job refers to secrets you have not stored on localnet: FIRST, SECOND')
      assert.match(error.hint ?? '', /^store each with `gpunet secrets set FIRST`/)
      assert.deepEqual(error.fields, {missing: ['FIRST', 'SECOND']})
      return true
    })
  })

  it('names the network to store them on off localnet', async () => {
    await assert.rejects(check(['GONE'], {network: 'devnet'}), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.equal(error.message, 'the job refers to a secret you have not stored on devnet: GONE')
      assert.match(
        error.hint ?? '',
        /^store it with `gpunet secrets set GONE --network devnet` \(the value on standard/,
      )
      return true
    })
  })

  it('asks no store when the job refers to no secret', async () => {
    // Nothing listens on port 1: asking would fail.
    assert.deepEqual(await check([], {url: 'http://127.0.0.1:1'}), [])
  })

  it('keeps the error of a store it cannot ask, adding how to skip the check; bad input stays as it is', async () => {
    await assert.rejects(check(['A'], {url: 'http://127.0.0.1:1'}), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.equal(error.code, 'secrets_unreachable')
      assert.equal(error.exitCode, 5)
      assert.match(error.hint ?? '', /^check the URL .+; or pass --no-secrets-check to post without checking/)
      assert.ok(error.hint?.endsWith(`; or ${SKIP}`), error.hint)
      return true
    })
    await assert.rejects(check(['A'], {network: 'devnet', url: 'ftp://x'}), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.equal(error.code, 'secrets_url_invalid')
      assert.equal(error.exitCode, 2)
      assert.equal(error.hint, SKIP, 'a store error without a hint of its own gets only the skip')
      return true
    })
    const bad = join(dir.dir, 'bad-wallet.json')
    await writeFile(bad, 'nope')
    await assert.rejects(check(['A'], {wallet: bad}), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.equal(error.code, 'wallet_invalid')
      assert.equal(error.exitCode, 3)
      assert.ok(!error.hint?.includes('--no-secrets-check'), 'skipping the check does not mend a broken wallet')
      return true
    })
  })
})
