import {strict as assert} from 'node:assert'

import {runCli} from '../../helpers/cli.js'
import {cliFixture} from '../../helpers/secrets.js'

describe('gpunet secrets delete', () => {
  let f: Awaited<ReturnType<typeof cliFixture>>
  before(async () => {
    f = await cliFixture()
    assert.equal((await runCli(['secrets', 'set', '--from-env-file', '-'], {stdin: 'A=1\nB=2\n', env: f.env})).code, 0)
  })
  after(async () => f.stop())

  it('refuses without a terminal unless --yes (exit 2), deleting nothing; deletes with --yes', async () => {
    const refused = await runCli(['secrets', 'delete', 'A', '--json'], {env: f.env})
    assert.equal(refused.code, 2, refused.stderr)
    assert.deepEqual(JSON.parse(refused.stdout), {
      error: {
        code: 'confirmation_required',
        message: 'refusing to delete the secret A on localnet without a terminal to confirm',
        hint: 'pass --yes to delete it from a script',
      },
    })
    assert.equal((await runCli(['secrets', 'get', 'A'], {env: f.env})).code, 0, 'A is kept')
    const result = await runCli(['secrets', 'delete', 'A', '--yes'], {env: f.env})
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /✔ Deleted A on localnet/)
    assert.equal((await runCli(['secrets', 'get', 'A'], {env: f.env})).code, 7)
  })

  it('prints one JSON document under --json', async () => {
    const result = await runCli(['secrets', 'delete', 'B', '--yes', '--json'], {env: f.env})
    assert.equal(result.code, 0, result.stderr)
    // One shape for the secrets commands; `deleted` deprecated, kept for one minor version.
    assert.deepEqual(JSON.parse(result.stdout), {network: 'localnet', url: f.url, secrets: [{name: 'B'}], deleted: 'B'})
  })

  it('exits 7 for an unknown name', async () => {
    const result = await runCli(['secrets', 'delete', 'NEVER_SET', '--yes'], {env: f.env})
    assert.equal(result.code, 7)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /Error: no secret named NEVER_SET/)
  })

  it('exits 2 without a name', async () => {
    const result = await runCli(['secrets', 'delete'], {env: f.env})
    assert.equal(result.code, 2)
    assert.match(result.stderr, /^Error: missing NAME \(the secret to delete\)$/m)
  })
})
