/** Settings: one test per layer of flag > environment > profile > config file > preset, and the config file's migration. */
import {strict as assert} from 'node:assert'
import {mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {activeProfile, configFile, readConfig, writeConfig} from '../../src/lib/config.js'
import {applySetting, settingsInForce} from '../../src/lib/config-settings.js'
import {resolveSecretsUrl} from '../../src/lib/network-connection.js'
import {resolveNetwork, settingSource} from '../../src/lib/network.js'
import {walletPath} from '../../src/lib/wallet.js'
import {removeDir, tempDir} from '../helpers/localnet.js'

const RPC = {key: 'rpcUrl', env: 'GPUNET_RPC_URL'} as const

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

  it('preset: with nothing set, the network preset holds', () => {
    assert.equal(settingSource('devnet', RPC, undefined, env), undefined)
    const row = settingsInForce('devnet', env).find((setting) => setting.key === 'rpcUrl')!
    assert.deepEqual([row.value, row.source], ['https://api.devnet.solana.com', 'preset'])
    assert.equal(resolveSecretsUrl('devnet', undefined, env), 'https://secrets.k8s.dev.nos.ci')
  })

  it('config file: its network section beats the preset', () => {
    write(layered)
    assert.deepEqual(settingSource('devnet', RPC, undefined, env), {value: 'https://file.example', from: 'config'})
    assert.equal(settingSource('mainnet', RPC, undefined, env), undefined, 'another network keeps its preset')
  })

  it('profile: the active profile beats the config file, on its own network only', () => {
    write(layered)
    env.GPUNET_PROFILE = 'dev'
    assert.deepEqual(settingSource('devnet', RPC, undefined, env), {value: 'https://profile.example', from: 'profile'})
    assert.equal(settingSource('mainnet', RPC, undefined, env), undefined)
    assert.equal(walletPath({env}).file, '/keys/dev.json')
  })

  it('environment: GPUNET_* beats the profile', () => {
    write(layered)
    Object.assign(env, {GPUNET_PROFILE: 'dev', GPUNET_RPC_URL: 'https://env.example', GPUNET_WALLET: '/env.json'})
    assert.deepEqual(settingSource('devnet', RPC, undefined, env), {value: 'https://env.example', from: 'env'})
    assert.equal(walletPath({env}).file, '/env.json')
    const row = settingsInForce('devnet', env).find((setting) => setting.key === 'rpcUrl')!
    assert.equal(row.source, 'env GPUNET_RPC_URL')
  })

  it('flag: a flag beats everything', () => {
    write(layered)
    Object.assign(env, {GPUNET_PROFILE: 'dev', GPUNET_RPC_URL: 'https://env.example'})
    assert.deepEqual(settingSource('devnet', RPC, 'https://flag.example', env), {
      value: 'https://flag.example',
      from: 'flag',
    })
    assert.equal(walletPath({env, path: '/flag.json'}).file, '/flag.json')
  })

  it("a profile gives the network, is always announced, and refuses another network's flag", () => {
    write({profiles: {prod: {network: 'mainnet'}}})
    const said: string[] = []
    assert.equal(
      resolveNetwork(undefined, (line) => said.push(line), env),
      'localnet',
    )
    env.GPUNET_PROFILE = 'prod'
    assert.equal(
      resolveNetwork(undefined, (line) => said.push(line), env),
      'mainnet',
    )
    assert.deepEqual(said, ['Profile prod: mainnet'])
    assert.throws(() => resolveNetwork('devnet', () => {}, env), /the profile prod is for mainnet, not devnet/)
    env.GPUNET_PROFILE = 'nope'
    assert.throws(
      () => activeProfile(env),
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
    assert.deepEqual(settingSource('devnet', RPC, undefined, env), {value: 'https://file.example', from: 'config'})
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
