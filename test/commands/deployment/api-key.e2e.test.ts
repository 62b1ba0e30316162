/**
 * `gpunet deployment api-key revoke` through the built CLI against the deployment manager's own API (its key routes
 * over a SQLite file, served on 127.0.0.1 in this process): a mistyped id, or one of another owner's keys, is exit 7
 * with the manager's words, never a success.
 */
import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import type Database from 'better-sqlite3'

import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {runCli} from '../../helpers/cli.js'
import {removeDir, tempDir} from '../../helpers/files.js'

describe('deployment api-key revoke', () => {
  let dir: string
  let db: Database.Database
  let api: DeploymentApi
  const env = () => ({
    GPUNET_WALLET: join(dir, 'wallet.json'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    GPUNET_LOCALNET_DIR: join(dir, 'localnet'),
    GPUNET_MANAGER_URL: api.url,
  })
  const cli = (args: string[]) => runCli(args, {env: env(), cwd: dir})

  before(async () => {
    dir = tempDir('gpunet-api-key-')
    db = openSqlite(join(dir, 'manager.db'))
    // The key routes read nothing of the manager but its log: no chain, no store.
    const ctx = {network: 'localnet', log: () => {}} as unknown as ManagerContext
    api = createDeploymentApi(ctx, createApiAuth({rows: sqliteApiKeyRows(db)}))
    await api.listen(0, '127.0.0.1')
  })
  after(async () => {
    await api.close()
    db.close()
    removeDir(dir)
  })

  it('is exit 7 with the manager’s words for an unknown id, in text and --json; a real one is revoked once', async () => {
    const made = await cli(['deployment', 'api-key', 'create', '--json'])
    assert.equal(made.code, 0, made.stderr)
    const {id} = JSON.parse(made.stdout) as {id: string}

    const text = await cli(['deployment', 'api-key', 'revoke', 'no-such-id'])
    assert.equal(text.code, 7, text.stdout)
    assert.equal(text.stdout, '')
    assert.match(text.stderr, /no API key no-such-id of [1-9A-HJ-NP-Za-km-z]{32,44}/)
    assert.match(text.stderr, /gpunet deployment api-key list/)

    const json = await cli(['deployment', 'api-key', 'revoke', 'no-such-id', '--json'])
    assert.equal(json.code, 7, json.stderr)
    const {error} = JSON.parse(json.stdout) as {error: {code: string; status: number}}
    assert.equal(error.code, 'api_key_not_found')
    assert.equal(error.status, 404)

    const revoked = await cli(['deployment', 'api-key', 'revoke', id])
    assert.equal(revoked.code, 0, revoked.stderr)
    assert.match(revoked.stdout, new RegExp(`Revoked API key ${id}`))
    assert.equal((await cli(['deployment', 'api-key', 'revoke', id])).code, 7, 'a key revoked already is not found')
  })
})
