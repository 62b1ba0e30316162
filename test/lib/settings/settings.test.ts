/**
 * The one resolver of a command's settings (src/lib/settings/settings.ts): the precedence flag > environment > profile >
 * config file > preset for every setting it knows (listed from the resolver, so a new one is tested as it is added),
 * and no module of src/lib reading the environment for settings behind its back.
 */
import {strict as assert} from 'node:assert'
import {mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join, relative, resolve} from 'node:path'

import {settingsInForce} from '../../../src/lib/settings/config-settings.js'
import {SETTING_LAYERS, type SettingLayer} from '../../../src/lib/network.js'
import {SETTING_KEYS, type SettingKey, SETTINGS, type SettingSpec} from '../../../src/lib/settings/catalog.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {removeDir, tempDir} from '../../helpers/files.js'

/** The network the table is resolved on: one with a preset for most settings, and not the default. */
const NETWORK = 'devnet'

/** The value a layer gives a setting: its own name, so the value tells which layer won (the network: devnet). */
function layerValue(key: SettingKey, layer: SettingLayer): string {
  return key === 'network' ? NETWORK : `${layer}-${key}`
}

describe('settings: one resolver, flag > environment > profile > config file > preset', () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir('gpunet-settings-')
  })
  afterEach(() => removeDir(dir))

  /** Resolves `key` with the given layers set (each to its own value), and the rest unset. */
  function resolveWith(key: SettingKey, layers: ReadonlySet<SettingLayer>) {
    const spec: SettingSpec = SETTINGS[key]
    const env: NodeJS.ProcessEnv = {XDG_CONFIG_HOME: dir, HOME: dir}
    if (layers.has('env')) env[spec.env] = layerValue(key, 'env')
    if (layers.has('profile')) env.GPUNET_PROFILE = 'table'
    const document = {
      version: 2,
      // A profile-only setting in a network's section is there to be ignored.
      networks: layers.has('config') || spec.profileOnly ? {[NETWORK]: {[key]: layerValue(key, 'config')}} : {},
      profiles: {table: {network: NETWORK, ...(key === 'network' ? {} : {[key]: layerValue(key, 'profile')})}},
    }
    mkdirSync(join(dir, 'gpunet'), {recursive: true})
    writeFileSync(join(dir, 'gpunet', 'config.json'), JSON.stringify(document))
    // The network is given as a flag for every other setting, so that its value is the devnet one at each layer.
    const flags: Partial<Record<SettingKey, string>> = key === 'network' ? {} : {network: NETWORK}
    if (layers.has('flag')) flags[key] = layerValue(key, 'flag')
    return resolveSettings({flags, env})
  }

  for (const key of SETTING_KEYS) {
    const spec: SettingSpec = SETTINGS[key]
    // The layers that can hold this setting: a profile-only one (network, wallet) is in no network section.
    const layers = SETTING_LAYERS.filter((layer) => layer !== 'preset' && !(layer === 'config' && spec.profileOnly))
    it(`${key}: ${[...layers, 'preset'].join(' > ')}`, () => {
      for (let top = 0; top <= layers.length; top += 1) {
        const set = new Set(layers.slice(top))
        const settings = resolveWith(key, set)
        const found = settings.get(key)
        const expected = layers[top]
        if (expected) {
          assert.equal(found?.from, expected, `${key} with ${[...set].join(', ')} set`)
          assert.equal(found.value, layerValue(key, expected))
          continue
        }
        const preset = key === 'network' ? 'localnet' : (spec.preset?.(NETWORK) ?? null)
        if (preset === null) assert.equal(found, undefined, `${key} with nothing set`)
        else assert.deepEqual(found, {value: preset, from: 'preset', source: 'preset'})
      }
    })
  }

  it('says where each value comes from as `config list` shows it, with one row per setting', () => {
    const settings = resolveWith('rpcUrl', new Set(['profile']))
    assert.equal(settings.get('rpcUrl')?.source, 'profile table')
    assert.equal(resolveWith('rpcUrl', new Set(['env'])).get('rpcUrl')?.source, 'env GPUNET_RPC_URL')
    assert.equal(resolveWith('rpcUrl', new Set(['config'])).get('rpcUrl')?.source, `config networks.${NETWORK}`)
    assert.deepEqual(
      settingsInForce(settings).map((row) => row.key),
      SETTING_KEYS,
    )
  })

  it("applies a profile on its own network only, and a command's fixed network over GPUNET_NETWORK", () => {
    mkdirSync(join(dir, 'gpunet'), {recursive: true})
    writeFileSync(
      join(dir, 'gpunet', 'config.json'),
      JSON.stringify({
        networks: {localnet: {localnetIds: 'devnet'}},
        profiles: {prod: {network: 'mainnet', rpcUrl: 'x'}},
      }),
    )
    const env = {XDG_CONFIG_HOME: dir, HOME: dir, GPUNET_PROFILE: 'prod', GPUNET_NETWORK: 'mainnet'}
    const localnet = resolveSettings({network: 'localnet', env})
    assert.equal(localnet.network, 'localnet')
    assert.equal(localnet.get('rpcUrl'), undefined, "the mainnet profile's rpcUrl is not the localnet's")
    assert.equal(localnet.value('localnetIds'), 'devnet')
    const said: string[] = []
    assert.equal(resolveSettings({env, announce: (line) => said.push(line)}).value('rpcUrl'), 'x')
    assert.deepEqual(said, ['Profile prod: mainnet'])
    assert.throws(
      () => resolveSettings({env, flags: {network: 'devnet'}}),
      (error: {code: string; exitCode: number}) => error.code === 'profile_network_conflict' && error.exitCode === 2,
    )
    assert.throws(
      () => resolveSettings({env: {XDG_CONFIG_HOME: dir, GPUNET_NETWORK: 'testnet'}}),
      (error: {code: string; exitCode: number}) => error.code === 'network_invalid' && error.exitCode === 2,
    )
  })
})

/**
 * Where src/lib may read the process's environment, and why: each is no setting of a command, or the resolver
 * itself. Anything else reading `process.env` is a setting resolved behind the resolver's back.
 */
const ENVIRONMENT_READERS: Record<string, string> = {
  'settings/settings.ts': 'the one resolver: its default environment, for library callers that pass none',
  'terminal/colors.ts': 'NO_COLOR and FORCE_COLOR, the terminal conventions of the output, not settings',
  'node/runtime/host-process.ts': "a host-process job's PATH, handed to the child",
  'node/runtime/podman.ts': "podman's own environment (XDG_DATA_HOME, its configuration), handed to podman",
  'localnet/server/control.ts':
    'the background localnet is spawned with the environment, so it resolves the same settings',
}

describe('settings: src/lib takes values, never the environment', () => {
  const LIB = resolve(import.meta.dirname, '..', '..', '..', 'src', 'lib')
  const files = (folder: string): string[] =>
    readdirSync(folder, {withFileTypes: true}).flatMap((entry) => {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) return files(path)
      return entry.name.endsWith('.ts') ? [relative(LIB, path)] : []
    })

  it('reads process.env only where ENVIRONMENT_READERS says why', () => {
    const readers = files(LIB).filter((file) =>
      readFileSync(join(LIB, file), 'utf8')
        .split('\n')
        .some((line) => !/^\s*(\/?\*|\/\/)/.test(line) && line.includes('process.env')),
    )
    assert.deepEqual(readers.sort(), Object.keys(ENVIRONMENT_READERS).sort())
  })

  it('names every GPUNET_ variable of a setting in the resolver alone', () => {
    const names = new Set(SETTING_KEYS.map((key) => SETTINGS[key].env))
    const elsewhere = files(LIB).filter((file) => {
      if (file === 'settings/settings.ts') return false
      const code = readFileSync(join(LIB, file), 'utf8')
      return [...names].some((name) => new RegExp(`env(\\.${name}\\b|\\[['"]${name}['"]\\])`).test(code))
    })
    assert.deepEqual(elsewhere, [])
  })
})
