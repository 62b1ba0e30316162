import {strict as assert} from 'node:assert'
import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {request} from 'node:http'
import {join} from 'node:path'

import type Database from 'better-sqlite3'

import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {type ApiAuth, createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import type {RequestHeaders} from '../../../src/lib/http/request-headers.js'
import {MAX_KEYS_PER_OWNER, sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'

async function refusal(promise: Promise<unknown>): Promise<GpunetError> {
  const error = await promise.then(
    () => assert.fail('accepted'),
    (e: unknown) => e,
  )
  assert.ok(error instanceof GpunetError, String(error))
  return error
}

async function thrown(f: () => Promise<unknown>): Promise<GpunetError> {
  return refusal(f())
}

describe('deployment API keys', () => {
  let dir: string
  let remove: () => Promise<void>
  let file: string
  let db: Database.Database

  beforeEach(async () => {
    ;({dir, remove} = await tempDir())
    file = join(dir, 'manager.db')
    db = openSqlite(file)
  })
  afterEach(async () => {
    if (db.open) db.close()
    await remove()
  })

  it('authenticates a key as its owner, lists keys without secrets, and refuses a revoked key', async () => {
    const owner = newWallet().address
    const auth = createApiAuth({rows: sqliteApiKeyRows(db), now: () => Date.parse('2026-11-27T15:00:00Z')})
    const made = await auth.apiKeys.create(owner, 'ci')
    assert.match(made.key, /^gpn_[A-Za-z0-9_-]{43}$/)
    assert.equal(made.name, 'ci')
    assert.equal(made.created_at, '2026-11-27T15:00:00.000Z')
    const other = await auth.apiKeys.create(owner)
    assert.equal(other.name, null)
    assert.notEqual(other.key, made.key)
    assert.notEqual(other.id, made.id)

    const bearer = (key: string): RequestHeaders => ({authorization: `Bearer ${key}`})
    assert.deepEqual(await auth.authenticate(bearer(made.key)), {owner, via: 'api-key'})
    assert.deepEqual(await auth.authenticate({authorization: `bearer  ${made.key}`}), {owner, via: 'api-key'})
    assert.deepEqual(await auth.authenticate({...bearer(made.key), 'x-user-id': owner}), {owner, via: 'api-key'})

    const listed = await auth.apiKeys.list(owner)
    assert.deepEqual(
      listed.map((k) => k.id),
      [made.id, other.id],
    )
    assert.ok(!JSON.stringify(listed).includes(made.key) && !JSON.stringify(listed).includes('gpn_'))
    assert.deepEqual(Object.keys(listed[0]!).sort(), ['created_at', 'id', 'name'])
    assert.deepEqual(await auth.apiKeys.list(newWallet().address), [])

    assert.equal((await auth.apiKeys.revoke(owner, made.id)).id, made.id)
    assert.deepEqual(
      (await auth.apiKeys.list(owner)).map((k) => k.id),
      [other.id],
    )
    const revoked = await refusal(auth.authenticate(bearer(made.key)))
    assert.equal(revoked.exitCode, ExitCode.DENIED)
    assert.equal(revoked.code, 'api_key_revoked')
    assert.ok(!revoked.message.includes(made.key) && !revoked.hint!.includes(made.key))
    // The other key still works; revoking twice is not found.
    assert.deepEqual(await auth.authenticate(bearer(other.key)), {owner, via: 'api-key'})
    assert.equal((await thrown(() => auth.apiKeys.revoke(owner, made.id))).exitCode, ExitCode.NOT_FOUND)
  })

  it("refuses unknown keys, another owner's revoke, and an x-user-id that is not the key's owner", async () => {
    const owner = newWallet().address
    const stranger = newWallet().address
    const auth = createApiAuth({rows: sqliteApiKeyRows(db)})
    const made = await auth.apiKeys.create(owner, 'mine')
    const flipped = made.key.slice(0, -1) + (made.key.endsWith('A') ? 'B' : 'A')
    for (const key of [flipped, `gpn_${'A'.repeat(43)}`, 'gpn_short', '', `${made.key}x`, made.key.slice(4)]) {
      const error = await refusal(auth.authenticate({authorization: `Bearer ${key}`}))
      assert.equal(error.exitCode, ExitCode.DENIED)
      assert.equal(error.code, 'api_key_unknown', key)
      if (key) assert.ok(!error.message.includes(key) && !error.hint!.includes(key))
    }
    const wrongUser = await refusal(auth.authenticate({authorization: `Bearer ${made.key}`, 'x-user-id': stranger}))
    assert.equal(wrongUser.code, 'auth_wrong_user')
    assert.equal((await thrown(() => auth.apiKeys.revoke(stranger, made.id))).exitCode, ExitCode.NOT_FOUND)
    assert.equal((await thrown(() => auth.apiKeys.revoke(owner, 'no-such-id'))).exitCode, ExitCode.NOT_FOUND)
    assert.deepEqual(await auth.authenticate({authorization: `Bearer ${made.key}`}), {owner, via: 'api-key'})
  })

  it('stores only the SHA-256 of a key, and keys survive a reopen of the file', async () => {
    const owner = newWallet().address
    const made = await createApiAuth({rows: sqliteApiKeyRows(db)}).apiKeys.create(owner, 'kept')
    db.close()
    const raw = readFileSync(file)
    assert.ok(!raw.includes(made.key) && !raw.includes(made.key.slice(4)), 'the key is in the file')
    const secret = Buffer.from(made.key.slice(4), 'base64url')
    assert.ok(!raw.includes(secret), "the key's bytes are in the file")
    const hash = createHash('sha256').update(made.key).digest()
    assert.ok(raw.includes(hash), "the key's SHA-256 is not in the file")

    db = openSqlite(file)
    const rows = db.prepare('SELECT * FROM api_keys').all() as Array<Record<string, unknown>>
    assert.equal(rows.length, 1)
    assert.deepEqual(rows[0]!.key_sha256, hash)
    const auth = createApiAuth({rows: sqliteApiKeyRows(db)})
    assert.deepEqual(await auth.authenticate({authorization: `Bearer ${made.key}`}), {owner, via: 'api-key'})
  })

  it('refuses bad names and owners (exit 3) and more than the per-owner limit of keys', async () => {
    const owner = newWallet().address
    const {apiKeys} = createApiAuth({rows: sqliteApiKeyRows(db)})
    for (const name of ['x'.repeat(65), 'two\nlines', 'bell\u0007']) {
      assert.equal((await thrown(() => apiKeys.create(owner, name))).exitCode, ExitCode.INVALID_INPUT)
    }
    assert.equal((await thrown(() => apiKeys.create('not an address'))).exitCode, ExitCode.INVALID_INPUT)
    for (let i = 0; i < MAX_KEYS_PER_OWNER; i++) await apiKeys.create(owner)
    const limit = await thrown(() => apiKeys.create(owner))
    assert.equal(limit.code, 'api_key_limit')
    await apiKeys.revoke(owner, (await apiKeys.list(owner))[0]!.id)
    assert.ok((await apiKeys.create(owner)).key)
  })

  it('lets a wallet and its API key act for the same owner', async () => {
    const wallet = newWallet()
    const auth = createApiAuth({rows: sqliteApiKeyRows(db)})
    const {key} = await auth.apiKeys.create(wallet.address)
    const byWallet = await auth.authenticate(apiAuthHeaders(wallet))
    const byKey = await auth.authenticate({authorization: `Bearer ${key}`})
    assert.equal(byWallet.owner, byKey.owner)
    assert.deepEqual([byWallet.via, byKey.via], ['wallet', 'api-key'])
  })
})

describe('deployment API keys over HTTP', () => {
  let dir: string
  let remove: () => Promise<void>
  let db: Database.Database
  let auth: ApiAuth
  let api: DeploymentApi
  const logged: string[] = []

  beforeEach(async () => {
    ;({dir, remove} = await tempDir())
    db = openSqlite(join(dir, 'manager.db'))
    auth = createApiAuth({rows: sqliteApiKeyRows(db)})
    // The key routes read nothing of the manager but its log: no chain, no store.
    const ctx = {network: 'localnet', log: (line: string) => logged.push(line)} as unknown as ManagerContext
    api = createDeploymentApi(ctx, auth)
    await api.listen(0, '127.0.0.1')
  })
  afterEach(async () => {
    await api.close()
    if (db.open) db.close()
    await remove()
  })

  /** The API's answer to a request with the wallet headers of `wallet`. */
  async function call(wallet: ReturnType<typeof newWallet>, method: string, path: string) {
    const response = await fetch(`${api.url}${path}`, {method, headers: {...apiAuthHeaders(wallet)}})
    const text = await response.text()
    return {status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown)}
  }

  it("answers 404 in the API's error shape for an unknown id and for another owner's key, and goes on serving", async () => {
    const owner = newWallet()
    const stranger = newWallet()
    const made = await auth.apiKeys.create(owner.address, 'ci')
    for (const [who, id] of [
      [stranger, made.id],
      [stranger, 'no-such-id'],
      [owner, 'no-such-id'],
    ] as const) {
      const answer = await call(who, 'DELETE', `/api/api-keys/${id}`)
      assert.equal(answer.status, 404, JSON.stringify(answer.body))
      assert.deepEqual(answer.body, {
        error: {
          code: 'api_key_not_found',
          message: `no API key ${id} of ${who.address}`,
          hint: 'list your keys with `gpunet deployment api-key list`',
        },
      })
    }
    assert.equal((await fetch(`${api.url}/health`)).status, 200)
    assert.deepEqual(await auth.authenticate({authorization: `Bearer ${made.key}`}), {
      owner: owner.address,
      via: 'api-key',
    })
    assert.deepEqual(logged, [])
  })

  it('refuses two authorization headers (401 auth_malformed), whichever of them would open the API', async () => {
    const owner = newWallet()
    const {key} = await auth.apiKeys.create(owner.address)
    const wallet = apiAuthHeaders(owner)
    for (const second of [`Bearer ${key}`, 'Bearer gpn_none', wallet.authorization]) {
      const answer = await new Promise<{status: number; body: string}>((resolve, reject) => {
        // Headers as a flat list of names and values: two `authorization` lines.
        const req = request(
          `${api.url}/api/api-keys`,
          {
            headers: [
              'host',
              new URL(api.url).host,
              'x-user-id',
              owner.address,
              'authorization',
              wallet.authorization,
              'authorization',
              second,
            ],
          },
          (res) => {
            let body = ''
            res.setEncoding('utf8')
            res.on('data', (chunk: string) => (body += chunk))
            res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
          },
        )
        req.on('error', reject)
        req.end()
      })
      assert.equal(answer.status, 401, answer.body)
      assert.equal((JSON.parse(answer.body) as {error: {code: string}}).error.code, 'auth_malformed')
    }
    assert.equal((await call(owner, 'GET', '/api/api-keys')).status, 200)
  })

  it('answers 204 only once the key is revoked, and 404 for it from then on', async () => {
    const owner = newWallet()
    const made = await auth.apiKeys.create(owner.address)
    assert.equal((await call(owner, 'DELETE', `/api/api-keys/${made.id}`)).status, 204)
    assert.equal(await auth.apiKeys.lookup(made.key), 'revoked')
    assert.equal((await call(owner, 'DELETE', `/api/api-keys/${made.id}`)).status, 404)
  })
})
