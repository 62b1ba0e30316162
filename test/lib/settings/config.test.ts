/** The config file: what its sections and profiles set, its migration, and a malformed one. */
import {strict as assert} from 'node:assert'
import {mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {configFile, readConfig, writeConfig} from '../../../src/lib/settings/config.js'
import {applySetting, settingsInForce} from '../../../src/lib/settings/config-settings.js'
import {resolveSettings, walletPath} from '../../../src/lib/settings/settings.js'
import {removeDir, tempDir} from '../../helpers/files.js'

describe('settings: precedence and profiles', () => {
  let dir: string
  let env: NodeJS.ProcessEnv
  const write = (document: unknown) => {
    mkdirSync(join(dir, 'gpunet'), {recursive: true})
    writeFileSync(configFile(env), JSON.stringify(document))
  }
  const layered = {
    networks: {devnet: {rpcUrl: 'https://file.example'}},
    profiles: {dev: {network: 'devnet', rpcUrl: 'https://profile.example', wallet: '/keys/dev.json'}},
  }

  beforeEach(() => {
    dir = tempDir('gpunet-config-')
    env = {XDG_CONFIG_HOME: dir, HOME: dir}
  })
  afterEach(() => removeDir(dir))

  // The precedence of every setting, layer by layer, is test/lib/settings/settings.test.ts's table.
  it('a network section or a profile sets its own network only; the others keep their presets', () => {
    write(layered)
    const on = (network: 'devnet' | 'mainnet', more: NodeJS.ProcessEnv = {}) =>
      resolveSettings({flags: {network}, env: {...env, ...more}})
    assert.deepEqual(on('devnet').get('rpcUrl'), {
      value: 'https://file.example',
      from: 'config',
      source: 'config networks.devnet',
    })
    assert.equal(on('mainnet').get('rpcUrl')?.from, 'preset')
    assert.equal(on('devnet').value('secretsUrl'), 'https://secrets.k8s.dev.nos.ci')
    assert.equal(on('devnet', {GPUNET_PROFILE: 'dev'}).value('rpcUrl'), 'https://profile.example')
    assert.equal(walletPath(on('devnet', {GPUNET_PROFILE: 'dev'})).file, '/keys/dev.json')
    const row = settingsInForce(on('devnet', {GPUNET_RPC_URL: 'https://env.example'})).find((r) => r.key === 'rpcUrl')!
    assert.deepEqual([row.value, row.source], ['https://env.example', 'env GPUNET_RPC_URL'])
  })

  it('an unknown profile is exit 2 naming the known ones', () => {
    write({profiles: {prod: {network: 'mainnet'}}})
    assert.throws(
      () => resolveSettings({env: {...env, GPUNET_PROFILE: 'nope'}}),
      (error: {code: string; exitCode: number; hint: string}) =>
        error.code === 'profile_not_found' && error.exitCode === 2 && /profiles: prod/.test(error.hint),
    )
  })

  it('migrates a version 1 file without loss: every member kept, 0600, the original kept as .v1.bak', async () => {
    const v1 = {networks: {devnet: {rpcUrl: 'https://file.example', pinataJwt: 'jwt-value'}}, mine: {keep: [1, 2]}}
    write(v1)
    const original = readFileSync(configFile(env), 'utf8')
    const document = readConfig(env)
    applySetting(document, {profile: 'prod'}, 'network', 'mainnet')
    await writeConfig(document, env)
    const written = JSON.parse(readFileSync(configFile(env), 'utf8')) as Record<string, unknown>
    assert.deepEqual(written, {
      version: 2,
      mine: {keep: [1, 2]},
      networks: v1.networks,
      profiles: {prod: {network: 'mainnet'}},
    })
    assert.equal(statSync(configFile(env)).mode & 0o777, 0o600)
    assert.equal(readFileSync(`${configFile(env)}.v1.bak`, 'utf8'), original)
    assert.equal(statSync(`${configFile(env)}.v1.bak`).mode & 0o777, 0o600)
    assert.equal(resolveSettings({flags: {network: 'devnet'}, env}).value('rpcUrl'), 'https://file.example')
  })

  it('refuses a malformed file with exit 3 instead of reading part of it', () => {
    for (const bad of [
      '{',
      '[]',
      '{"version": 3}',
      '{"networks": {"devnet": {"rpcUrl": 1}}}',
      '{"profiles": {"p": {}}}',
    ]) {
      mkdirSync(join(dir, 'gpunet'), {recursive: true})
      writeFileSync(configFile(env), bad)
      assert.throws(
        () => readConfig(env),
        (error: {code: string; exitCode: number}) => error.code === 'config_invalid' && error.exitCode === 3,
        bad,
      )
    }
  })

  it('keeps __proto__ as a plain profile name', () => {
    const document = readConfig(env)
    applySetting(document, {profile: '__proto__'}, 'network', 'devnet')
    assert.equal(Object.getPrototypeOf(document.profiles), Object.prototype)
    assert.equal(JSON.stringify(document.profiles), '{"__proto__":{"network":"devnet"}}')
  })
})
