/** `gpunet config get|set|unset|list` and `--profile` through the built CLI. */
import {Keypair} from '@solana/web3.js'
import {strict as assert} from 'node:assert'
import {mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'
import {removeDir, tempDir} from '../../helpers/files.js'

interface Listed {
  network: string
  profile: string | null
  settings: {key: string; value: string | null; set: boolean; source: string | null}[]
  profiles: {name: string; network: string}[]
}

const JWT = 'eyJhbGciOiJIUzI1NiJ9.pinning-secret-value'

describe('gpunet config', function () {
  this.timeout(30_000)
  let dir: string
  let env: NodeJS.ProcessEnv
  const cli = (args: string[], stdin?: string, extra: NodeJS.ProcessEnv = {}) =>
    runCli(args, {env: {...env, ...extra}, stdin})
  const file = () => join(dir, 'config', 'gpunet', 'config.json')
  const list = async (args: string[], extra: NodeJS.ProcessEnv = {}): Promise<Listed> => {
    const result = await cli(['config', 'list', '--json', ...args], undefined, extra)
    assert.equal(result.code, 0, result.stderr + result.stdout)
    return JSON.parse(result.stdout) as Listed
  }
  const setting = (listed: Listed, key: string) => listed.settings.find((row) => row.key === key)!

  beforeEach(() => {
    dir = tempDir('gpunet-config-cli-')
    env = {XDG_CONFIG_HOME: join(dir, 'config'), HOME: dir, GPUNET_WALLET: '', GPUNET_PROFILE: '', GPUNET_NETWORK: ''}
  })
  afterEach(() => removeDir(dir))

  it('sets, gets and unsets a network setting; list shows where each value comes from', async () => {
    assert.equal((await cli(['config', 'set', 'rpcUrl', 'https://rpc.example.org', '--network', 'devnet'])).code, 0)
    const got = await cli(['config', 'get', 'rpcUrl', '--network', 'devnet'])
    assert.equal(got.stdout, 'https://rpc.example.org\n')
    assert.match(got.stderr, /from config networks\.devnet/)
    assert.equal(setting(await list(['--network', 'devnet']), 'rpcUrl').source, 'config networks.devnet')
    const fromEnv = await list(['--network', 'devnet'], {GPUNET_RPC_URL: 'https://env.example.org'})
    assert.deepEqual(setting(fromEnv, 'rpcUrl'), {
      key: 'rpcUrl',
      value: 'https://env.example.org',
      set: true,
      source: 'env GPUNET_RPC_URL',
      env: 'GPUNET_RPC_URL',
    })
    const removed = await cli(['config', 'unset', 'rpcUrl', '--network', 'devnet'])
    assert.equal(removed.code, 0)
    assert.match(removed.stdout, /Removed rpcUrl from networks\.devnet/)
    assert.equal(setting(await list(['--network', 'devnet']), 'rpcUrl').source, 'preset')
    assert.equal(statSync(file()).mode & 0o777, 0o600)
    // Again: nothing is there, so nothing is said to be removed.
    const again = await cli(['config', 'unset', 'rpcUrl', '--network', 'devnet'])
    assert.equal(again.code, 0)
    assert.match(again.stdout, /^Nothing to remove: rpcUrl is not set in networks\.devnet/)
    assert.doesNotMatch(again.stdout, /Removed/)
    const againJson = await cli(['config', 'unset', 'rpcUrl', '--network', 'devnet', '--json'])
    assert.equal((JSON.parse(againJson.stdout) as {removed: string | null}).removed, null)
  })

  it('never prints the pinning JWT: read from stdin, hidden in list and --json, refused as an argument', async () => {
    const asArgument = await cli(['config', 'set', 'pinataJwt', JWT, '--network', 'devnet'])
    assert.equal(asArgument.code, 2)
    assert.doesNotMatch(asArgument.stdout + asArgument.stderr, /pinning-secret-value/)
    const set = await cli(['config', 'set', 'pinataJwt', '--network', 'devnet', '--json'], `${JWT}\n`)
    assert.equal(set.code, 0, set.stderr)
    assert.equal(JSON.parse(readFileSync(file(), 'utf8')).networks.devnet.pinataJwt, JWT)
    const human = await cli(['config', 'list', '--network', 'devnet'])
    const json = await cli(['config', 'list', '--network', 'devnet', '--json'])
    const get = await cli(['config', 'get', 'pinataJwt', '--network', 'devnet'])
    assert.equal(get.code, 2)
    for (const output of [set, human, json, get])
      assert.doesNotMatch(output.stdout + output.stderr, /pinning-secret-value/)
    assert.match(human.stdout, /pinataJwt +\(set, hidden\) +\[config networks\.devnet\]/)
    assert.deepEqual(setting(JSON.parse(json.stdout) as Listed, 'pinataJwt'), {
      key: 'pinataJwt',
      value: null,
      set: true,
      source: 'config networks.devnet',
      env: 'GPUNET_PINATA_JWT',
    })
  })

  it('a profile starts with its network, selects it, and is announced on every command', async () => {
    const early = await cli(['config', 'set', 'rpcUrl', 'https://x.example', '--profile', 'prod'])
    assert.equal(early.code, 2)
    assert.match(early.stderr, /a profile starts with its network/)
    assert.equal((await cli(['config', 'set', 'network', 'mainnet', '--profile', 'prod'])).code, 0)
    assert.equal((await cli(['config', 'set', 'rpcUrl', 'https://mainnet.example', '--profile', 'prod'])).code, 0)
    const listed = await list(['--profile', 'prod'])
    assert.equal(listed.network, 'mainnet')
    assert.equal(listed.profile, 'prod')
    assert.equal(setting(listed, 'rpcUrl').source, 'profile prod')
    assert.deepEqual(listed.profiles, [{name: 'prod', network: 'mainnet'}])
    const viaEnv = await cli(['config', 'list'], undefined, {GPUNET_PROFILE: 'prod'})
    assert.match(viaEnv.stderr, /^Profile prod: mainnet$/m)
    assert.match(viaEnv.stdout, /^Settings for mainnet \(profile prod\)/)

    const conflict = await cli(['config', 'list', '--profile', 'prod', '--network', 'devnet'])
    assert.equal(conflict.code, 2)
    assert.match(conflict.stderr, /the profile prod is for mainnet, not devnet/)
    const unknown = await cli(['config', 'list', '--profile', 'nope'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /there is no profile named nope/)
  })

  it("a profile's wallet is the wallet of every command under it", async () => {
    const keypair = Keypair.generate()
    const keyFile = join(dir, 'prod-key.json')
    writeFileSync(keyFile, JSON.stringify([...keypair.secretKey]))
    await cli(['config', 'set', 'network', 'devnet', '--profile', 'dev'])
    assert.equal((await cli(['config', 'set', 'wallet', keyFile, '--profile', 'dev'])).code, 0)
    const address = await cli(['wallet', 'address', '--profile', 'dev'])
    assert.equal(address.stdout, `${keypair.publicKey.toBase58()}\n`, address.stderr)
    const perNetwork = await cli(['config', 'set', 'wallet', keyFile, '--network', 'devnet'])
    assert.equal(perNetwork.code, 2)
    assert.match(perNetwork.stderr, /wallet is set per profile/)
  })

  it('removes a whole profile, and keeps its network while it exists', async () => {
    await cli(['config', 'set', 'network', 'devnet', '--profile', 'old'])
    const keepNetwork = await cli(['config', 'unset', 'network', '--profile', 'old'])
    assert.equal(keepNetwork.code, 2)
    assert.equal((await cli(['config', 'unset', '--profile', 'old'])).code, 0)
    assert.deepEqual((await list([])).profiles, [])
  })

  it('refuses unknown keys (with the closest one) and bad values with exit 2, leaving the file as it was', async () => {
    await cli(['config', 'set', 'market', Keypair.generate().publicKey.toBase58(), '--network', 'devnet'])
    const before = readFileSync(file(), 'utf8')
    const typo = await cli(['config', 'set', 'rpc-url', 'https://x.example'])
    assert.equal(typo.code, 2)
    assert.match(typo.stderr, /there is no setting named rpc-url[\s\S]*did you mean rpcUrl\?/)
    for (const [key, value] of [
      ['rpcUrl', 'not a url'],
      ['rpcUrl', 'ftp://x.example'],
      ['market', 'not-base58!'],
      ['priorityFee', 'yes'],
      ['maxPriorityFee', '-1'],
    ]) {
      const result = await cli(['config', 'set', key!, value!, '--network', 'devnet'])
      assert.equal(result.code, 2, `${key} ${value}`)
      assert.match(result.stderr, new RegExp(`Error: ${key} `))
    }
    assert.equal(readFileSync(file(), 'utf8'), before)
  })

  it('a malformed config file is exit 3 with a hint, and is left as it is', async () => {
    mkdirSync(join(dir, 'config', 'gpunet'), {recursive: true})
    writeFileSync(file(), '{"networks": ')
    const result = await cli(['config', 'set', 'rpcUrl', 'https://x.example', '--network', 'devnet'])
    assert.equal(result.code, 3)
    assert.match(result.stderr, /config\.json is not valid JSON/)
    assert.equal(readFileSync(file(), 'utf8'), '{"networks": ')
  })
})
