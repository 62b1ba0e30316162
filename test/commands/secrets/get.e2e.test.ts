import {strict as assert} from 'node:assert'

import {runCli} from '../../helpers/cli.js'
import {startProxy} from '../../helpers/http.js'
import {cliSandbox} from '../../helpers/cli-localnet.js'
import {cliFixture} from '../../helpers/secrets.js'

describe('gpunet secrets get', () => {
  let f: Awaited<ReturnType<typeof cliFixture>>
  before(async () => {
    f = await cliFixture()
    const result = await runCli(['secrets', 'set', 'HF_TOKEN'], {stdin: 'hf_secret_value', env: f.env})
    assert.equal(result.code, 0, result.stderr)
    assert.equal((await runCli(['secrets', 'set', 'DB'], {stdin: 'db value', env: f.env})).code, 0)
  })
  after(async () => f.stop())

  it('prints one value alone, without a trailing newline when piped', async () => {
    const result = await runCli(['secrets', 'get', 'HF_TOKEN'], {env: f.env})
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'hf_secret_value')
    assert.equal(result.stderr, '')
  })

  it('prints the secrets shape, {network, url, secrets: [{name, value}]}, under --json (name and value deprecated)', async () => {
    const result = await runCli(['secrets', 'get', 'HF_TOKEN', '--json'], {env: f.env})
    assert.deepEqual(JSON.parse(result.stdout), {
      network: 'localnet',
      url: f.url,
      secrets: [{name: 'HF_TOKEN', value: 'hf_secret_value'}],
      name: 'HF_TOKEN',
      value: 'hf_secret_value',
    })
  })

  it('lists names with masked values', async () => {
    const result = await runCli(['secrets', 'get'], {env: f.env})
    assert.equal(result.code, 0)
    assert.equal(result.stdout, 'DB        ••••••••\nHF_TOKEN  ••••••••\n')
    assert.ok(!result.stdout.includes('hf_secret_value'))
    const json = JSON.parse((await runCli(['secrets', 'get', '--json'], {env: f.env})).stdout)
    assert.deepEqual(json.secrets, [{name: 'DB'}, {name: 'HF_TOKEN'}])
  })

  it('shows values when asked', async () => {
    const result = await runCli(['secrets', 'get', '--show-values'], {env: f.env})
    assert.equal(result.stdout, 'DB        db value\nHF_TOKEN  hf_secret_value\n')
  })

  it('exits 7 for an unknown name, in both output modes', async () => {
    const human = await runCli(['secrets', 'get', 'NOPE'], {env: f.env})
    assert.equal(human.code, 7)
    assert.equal(human.stdout, '')
    assert.match(
      human.stderr,
      /Error: no secret named NOPE on localnet\nHint: list your secrets with: gpunet secrets get/,
    )
    const json = await runCli(['secrets', 'get', 'NOPE', '--json'], {env: f.env})
    assert.equal(json.code, 7)
    assert.equal(JSON.parse(json.stdout).error.code, 'not_found')
  })

  it('exits 5 when the service is unreachable', async () => {
    const result = await runCli(['secrets', 'get', '--json'], {
      env: {...f.env, GPUNET_SECRETS_URL: 'http://127.0.0.1:9'},
    })
    assert.equal(result.code, 5)
    const error = JSON.parse(result.stdout).error
    assert.equal(error.code, 'secrets_unreachable')
    assert.match(error.hint, /--secrets-url or GPUNET_SECRETS_URL/)
  })

  it("uses the network's own secrets service on devnet when none is set", async () => {
    // A stand-in proxy refuses the tunnel, so nothing leaves the machine; it shows where the CLI went.
    const proxy = await startProxy()
    try {
      const env = {...f.env, GPUNET_SECRETS_URL: '', HTTPS_PROXY: proxy.url, NO_PROXY: ''}
      const devnet = await runCli(['secrets', 'get', '--network', 'devnet', '--json'], {env})
      assert.equal(devnet.code, 5, devnet.stderr)
      const {error} = JSON.parse(devnet.stdout) as {error: {code: string; message: string}}
      assert.equal(error.code, 'secrets_unreachable')
      assert.match(error.message, /^cannot reach the secrets service at https:\/\/secrets\.k8s\.dev\.nos\.ci /)
      assert.ok(proxy.seen.every((line) => line === 'CONNECT secrets.k8s.dev.nos.ci:443') && proxy.seen.length > 0)
    } finally {
      await proxy.close()
    }
  })

  it("uses the localnet's own secrets service on localnet, starting the localnet when none runs", async () => {
    const sandbox = cliSandbox()
    try {
      const env = {...sandbox.env, GPUNET_SECRETS_URL: ''}
      const set = await runCli(['secrets', 'set', 'LOCAL_ONE'], {env, stdin: 'local value'})
      assert.equal(set.code, 0, set.stderr)
      assert.match(set.stderr, /Started a localnet in the background at http:\/\/127\.0\.0\.1:\d+/)
      const get = await runCli(['secrets', 'get', 'LOCAL_ONE'], {env})
      assert.equal(get.code, 0, get.stderr)
      assert.equal(get.stdout, 'local value')
      assert.doesNotMatch(get.stderr, /Started a localnet/)
    } finally {
      await sandbox.cleanup()
    }
  })

  it('takes the URL from the config file when neither the flag nor the variable is set', async () => {
    const {mkdir, writeFile} = await import('node:fs/promises')
    const {join} = await import('node:path')
    const dir = join(f.home, '.config', 'gpunet')
    await mkdir(dir, {recursive: true})
    await writeFile(join(dir, 'config.json'), JSON.stringify({networks: {devnet: {secretsUrl: f.url}}}))
    try {
      const result = await runCli(['secrets', 'get', 'DB', '--network', 'devnet'], {
        env: {...f.env, GPUNET_SECRETS_URL: ''},
      })
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, 'db value')
    } finally {
      await writeFile(join(dir, 'config.json'), '{}')
    }
  })

  it('exits 3 when --wallet is not a keypair file, without creating it', async () => {
    const result = await runCli(['secrets', 'get', '--wallet', '/nonexistent/wallet.json'], {env: f.env})
    assert.equal(result.code, 3)
    assert.match(result.stderr, /cannot read the wallet \/nonexistent\/wallet\.json: no such file/)
  })

  it('logs in again when the cached token is refused', async () => {
    const {writeFile, readFile} = await import('node:fs/promises')
    const {join} = await import('node:path')
    const cacheFile = join(f.home, '.config', 'gpunet', 'secrets-tokens.json')
    const cache = JSON.parse(await readFile(cacheFile, 'utf8')) as Record<string, {token: string}>
    for (const entry of Object.values(cache)) entry.token = `${entry.token.slice(0, -4)}AAAA`
    await writeFile(cacheFile, JSON.stringify(cache))
    const logins = f.service.lines.filter((l) => l.includes('POST /login')).length
    const result = await runCli(['secrets', 'get', 'DB'], {env: f.env})
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'db value')
    assert.equal(f.service.lines.filter((l) => l.includes('POST /login')).length, logins + 1)
  })
})
