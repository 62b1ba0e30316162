import {strict as assert} from 'node:assert'
import {stat, writeFile} from 'node:fs/promises'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'
import {cliFixture} from '../../helpers/secrets.js'

describe('gpunet secrets set', () => {
  let f: Awaited<ReturnType<typeof cliFixture>>
  beforeEach(async () => {
    f = await cliFixture()
  })
  afterEach(async () => f.stop())

  const stored = async () =>
    JSON.parse((await runCli(['secrets', 'get', '--show-values', '--json'], {env: f.env})).stdout).secrets

  it('reads the value from standard input, dropping one trailing newline', async () => {
    const result = await runCli(['secrets', 'set', 'DB_PASS'], {stdin: 'hunter2\n', env: f.env})
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /✔ Stored DB_PASS on localnet \(http:\/\/127\.0\.0\.1:\d+\)/)
    // the first command on localnet creates the default wallet, and says where
    assert.equal(
      result.stderr,
      `created a new localnet wallet at ${join(f.home, '.config', 'gpunet', 'wallet.json')}\n`,
    )
    assert.deepEqual(await stored(), [{name: 'DB_PASS', value: 'hunter2'}])
  })

  it('reads @FILE byte for byte and prints one JSON document under --json', async () => {
    const file = join(f.home, 'key.pem')
    await writeFile(file, 'line 1\nline 2\n')
    const result = await runCli(['secrets', 'set', 'TLS_KEY', `@${file}`, '--json'], {env: f.env})
    assert.equal(result.code, 0, result.stderr)
    // One shape for the secrets commands; `names` deprecated, kept for one minor version.
    assert.deepEqual(JSON.parse(result.stdout), {
      network: 'localnet',
      url: f.url,
      secrets: [{name: 'TLS_KEY'}],
      names: ['TLS_KEY'],
    })
    assert.deepEqual(await stored(), [{name: 'TLS_KEY', value: 'line 1\nline 2\n'}])
  })

  it('warns on stderr that --value lands in shell history', async () => {
    const result = await runCli(['secrets', 'set', 'API', '--value', 'abc', '--json'], {env: f.env})
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stderr, /Warning: --value puts the secret in your shell history/)
    assert.deepEqual(JSON.parse(result.stdout).secrets, [{name: 'API'}])
    assert.deepEqual(await stored(), [{name: 'API', value: 'abc'}])
  })

  it('sets every line of an env file at once', async () => {
    const file = join(f.home, '.env')
    await writeFile(file, '# production\nHF_TOKEN=hf_123\nexport DB_URL="postgres://u:p@h/db"\nEMPTY=\n')
    const result = await runCli(['secrets', 'set', '--from-env-file', file], {env: f.env})
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /Stored DB_URL, EMPTY, HF_TOKEN/)
    assert.deepEqual(await stored(), [
      {name: 'DB_URL', value: 'postgres://u:p@h/db'},
      {name: 'EMPTY', value: ''},
      {name: 'HF_TOKEN', value: 'hf_123'},
    ])
  })

  it('refuses a value given as a plain argument, without echoing it', async () => {
    const result = await runCli(['secrets', 'set', 'API', 'plain-secret'], {env: f.env})
    assert.equal(result.code, 2)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /not taken as an argument/)
    assert.ok(!result.stderr.includes('plain-secret'))
  })

  it('exits 3 on an invalid name or an unreadable file, before contacting the service', async () => {
    const badName = await runCli(['secrets', 'set', 'naïve', '--value', 'x', '--json'], {
      env: {...f.env, GPUNET_SECRETS_URL: 'http://127.0.0.1:1'},
    })
    assert.equal(badName.code, 3)
    assert.equal(JSON.parse(badName.stdout).error.code, 'invalid_name')
    const missing = await runCli(['secrets', 'set', 'X', '@/nonexistent/file'], {env: f.env})
    assert.equal(missing.code, 3)
    assert.match(missing.stderr, /cannot read \/nonexistent\/file: no such file/)
    const big = await runCli(['secrets', 'set', 'BIG'], {stdin: 'x'.repeat(64 * 1024 + 1), env: f.env})
    assert.equal(big.code, 3)
    assert.match(big.stderr, /65537 bytes; the limit is 65536 bytes/)
  })

  it('exits 2 on empty standard input and without a name', async () => {
    const empty = await runCli(['secrets', 'set', 'X'], {env: f.env})
    assert.equal(empty.code, 2)
    assert.match(empty.stderr, /no value for X on standard input/)
    const noName = await runCli(['secrets', 'set', '--json'], {env: f.env})
    assert.equal(noName.code, 2)
    assert.equal(JSON.parse(noName.stdout).error.code, 'usage')
  })

  it('creates the localnet wallet and caches the token in 0600 files, logging in once', async () => {
    for (const name of ['A', 'B', 'C'])
      assert.equal((await runCli(['secrets', 'set', name, '--value', 'v'], {env: f.env})).code, 0)
    assert.equal(f.service.lines.filter((l) => l.includes('POST /login')).length, 1)
    assert.equal((await stat(join(f.home, '.config', 'gpunet', 'wallet.json'))).mode & 0o777, 0o600)
    assert.equal((await stat(join(f.home, '.config', 'gpunet', 'secrets-tokens.json'))).mode & 0o777, 0o600)
  })
})
