/**
 * The secrets service's master key and files (issue 26, secrets survivors): a key file others can read is refused,
 * a missing one is made private, keys are read exactly (hex or base64, one 32-byte key and nothing else), the
 * SQLite journal files are private too, and a database URL is logged without its password.
 */
import {strict as assert} from 'node:assert'
import {chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {
  loadMasterKey,
  openSecretsService,
  openSqliteStorage,
  redactUrl,
} from '../../../../src/lib/secrets/service/index.js'
import {tempDir} from '../../../helpers/files.js'

const KEY = Buffer.alloc(32, 7)

/** The error `promise` rejects with: code, message, hint, exit code. */
async function refusal(
  promise: Promise<unknown>,
): Promise<{code: string; message: string; hint?: string; exitCode: number}> {
  try {
    await promise
  } catch (error) {
    return error as never
  }
  assert.fail('expected a refusal')
}

describe('secrets service: master key and files', () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir('gpunet-key-')
  })
  afterEach(() => rmSync(dir, {recursive: true, force: true}))

  it('reads a key as 64 hex digits or base64, around white space', async () => {
    const file = join(dir, 'unused.key')
    assert.deepEqual(await loadMasterKey(file, {GPUNET_SECRETS_KEY: KEY.toString('hex')}), KEY)
    assert.deepEqual(await loadMasterKey(file, {GPUNET_SECRETS_KEY: ` ${KEY.toString('base64')}\n`}), KEY)
    assert.deepEqual(await loadMasterKey(file, {GPUNET_SECRETS_KEY: `\n${KEY.toString('hex')} `}), KEY)
  })

  it('refuses what is not one 32-byte key: hex with more around it, short base64 (exit 3, with a hint)', async () => {
    for (const text of [`${KEY.toString('hex')}00`, `zz${KEY.toString('hex')}`, Buffer.alloc(31).toString('base64')]) {
      const error = await refusal(loadMasterKey(join(dir, 'x'), {GPUNET_SECRETS_KEY: text}))
      assert.equal(error.code, 'key_invalid', text)
      assert.equal(error.message, 'the secretsKey setting (GPUNET_SECRETS_KEY) does not hold a 32-byte key')
      assert.equal(error.hint, 'make one with: openssl rand -base64 32')
      assert.equal(error.exitCode, 3)
    }
  })

  it('makes a missing key file private, and reads it back', async () => {
    const file = join(dir, 'secrets.key')
    const key = await loadMasterKey(file, {})
    assert.equal(key.length, 32)
    assert.equal(statSync(file).mode & 0o777, 0o600)
    assert.equal(readFileSync(file, 'utf8'), `${key.toString('base64')}\n`)
    assert.deepEqual(await loadMasterKey(file, {}), key)
  })

  it('refuses a key file other users can read, and one it cannot read (exit 3)', async () => {
    const file = join(dir, 'secrets.key')
    writeFileSync(file, KEY.toString('base64'), {mode: 0o600})
    assert.deepEqual(await loadMasterKey(file, {}), KEY)
    for (const mode of [0o640, 0o604]) {
      chmodSync(file, mode)
      const exposed = await refusal(loadMasterKey(file, {}))
      assert.deepEqual(
        [exposed.code, exposed.message, exposed.hint, exposed.exitCode],
        ['key_file_exposed', `the key file ${file} is readable by other users`, `run: chmod 600 ${file}`, 3],
      )
    }
    const folder = join(dir, 'a-folder.key')
    mkdirSync(folder, {mode: 0o700})
    const unreadable = await refusal(loadMasterKey(folder, {}))
    assert.equal(unreadable.code, 'key_file_unreadable')
    assert.match(unreadable.message, new RegExp(`^cannot read the key file ${folder}: `))
    assert.equal(unreadable.exitCode, 3)
  })

  it('makes SQLite journal files private even when a crash left them behind, readable by others', async () => {
    // A snapshot taken while a storage is open, with a write in its journal: what a crash leaves.
    const live = join(dir, 'live.db')
    const writer = openSqliteStorage(live)
    const quota = {secretsPerOwner: 10, bytesPerOwner: 10_000, totalBytes: 100_000}
    await writer.put('owner', [{name: 'A', sealed: Buffer.alloc(40, 1)}], quota)
    const file = join(dir, 'secrets.db')
    for (const suffix of ['', '-wal', '-shm']) {
      writeFileSync(`${file}${suffix}`, readFileSync(`${live}${suffix}`))
      chmodSync(`${file}${suffix}`, suffix === '' ? 0o600 : 0o644)
    }
    await writer.close()
    assert.ok(statSync(`${file}-wal`).size > 0, 'the journal holds the write')
    const storage = openSqliteStorage(file)
    try {
      for (const suffix of ['-wal', '-shm']) assert.equal(statSync(`${file}${suffix}`).mode & 0o777, 0o600, suffix)
    } finally {
      await storage.close()
    }
  })

  it('says where a service keeps its secrets and its key, as secrets serve prints them', async () => {
    const fromFile = await openSecretsService({dataDir: dir, env: {}})
    await fromFile.service.close()
    assert.deepEqual([fromFile.storage, fromFile.key], [`SQLite ${join(dir, 'secrets.db')}`, join(dir, 'secrets.key')])
    const fromEnv = await openSecretsService({dataDir: dir, env: {GPUNET_SECRETS_KEY: KEY.toString('hex')}})
    await fromEnv.service.close()
    assert.equal(fromEnv.key, 'GPUNET_SECRETS_KEY')
  })

  it('logs a database URL without its password', () => {
    assert.equal(
      redactUrl('postgres://gpunet:s3cret@db.example:5432/secrets'),
      'postgres://gpunet:***@db.example:5432/secrets',
    )
    assert.equal(redactUrl('postgres://db.example/secrets'), 'postgres://db.example/secrets')
    assert.equal(redactUrl('not a url with s3cret'), 'postgres://…')
  })
})
