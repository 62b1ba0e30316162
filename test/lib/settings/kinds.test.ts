/**
 * One parser per kind (src/lib/settings/kinds.ts): `config set`, the resolver and the setting flags read a value the
 * same way, so a spelling is accepted by all of them or by none, and the text `config set` stores reads back to the
 * value it was given as.
 */
import {strict as assert} from 'node:assert'
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {isGpunetError} from '../../../src/lib/errors.js'
import {
  isSecretSetting,
  SECRET_SETTINGS,
  SETTING_KEYS,
  type SettingKey,
  SETTINGS,
} from '../../../src/lib/settings/catalog.js'
import {checkValue, settingsInForce} from '../../../src/lib/settings/config-settings.js'
import {type KindName, KINDS, readKind} from '../../../src/lib/settings/kinds.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {secondsFlag, settingFlagValues, SETTING_FLAGS} from '../../../src/cli/flags.js'
import {removeDir, tempDir} from '../../helpers/files.js'

/** Texts each kind takes, with the value it reads them as, and texts it refuses. */
const SAMPLES: {[K in KindName]: {good: [string, unknown][]; bad: string[]}} = {
  url: {
    good: [
      ['https://rpc.example.org/', 'https://rpc.example.org'],
      ['http://127.0.0.1:8899', 'http://127.0.0.1:8899'],
    ],
    bad: ['not a url', 'ftp://x.example', 'rpc.example.org'],
  },
  address: {
    good: [['7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41', '7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41']],
    bad: ['not-base58!', 'x'.repeat(45), '1111'],
  },
  boolean: {
    good: [
      ['true', true],
      ['FALSE', false],
      ['1', true],
      ['0', false],
    ],
    bad: ['yes', 'no', 'on', 'off', '2', ''],
  },
  sol: {
    good: [
      ['0.001', 1_000_000n],
      ['1', 1_000_000_000n],
      ['.5', 500_000_000n],
    ],
    bad: ['-1', '0.0000000001', '1e3', 'abc', '18446744073.709551616'],
  },
  path: {good: [['/abs/file.json', '/abs/file.json']], bad: []},
  duration: {
    good: [
      ['90s', 90_000],
      ['1h30m', 5_400_000],
    ],
    bad: ['90', '1 h', 'soon'],
  },
  seconds: {
    good: [
      ['600', 600],
      ['10m', 600],
      ['1h30m', 5400],
      ['0', 0],
    ],
    bad: ['1500ms', '10 m', 'abc', '-5'],
  },
  cooldown: {
    good: [
      ['30s', 30_000],
      ['6h', 21_600_000],
      ['600000', 600_000],
    ],
    bad: ['0', '0s', '-5s', '1.5s', 'soon', ''],
  },
  drain: {
    good: [
      ['10m', 600_000],
      ['1s', 1000],
      ['24h', 86_400_000],
      ['1m30s', 90_000],
    ],
    bad: ['0s', '999ms', '24h1s', '2d', '600', '-1m', 'forever', ''],
  },
  hold: {
    good: [
      ['120s', 120_000],
      ['1s', 1000],
      ['30m', 1_800_000],
    ],
    bad: ['0s', '999ms', '30m1s', '1h', '120', '-1m', 'soon', ''],
  },
  multiplier: {
    good: [
      ['2', 2],
      ['1.5', 1.5],
    ],
    bad: ['0', '0.0', '-2', '1e3', 'twice', ''],
  },
  origins: {
    good: [
      ['http://localhost:3000, https://app.example/', ['http://localhost:3000', 'https://app.example']],
      ['*', ['*']],
    ],
    bad: ['localhost:3000', 'https://app.example/path'],
  },
  positive: {
    good: [
      ['50', 50],
      ['0.25', 0.25],
      [' 1000000 ', 1_000_000],
    ],
    bad: ['0', '-1', '1e3', 'fast', '0.0000000001', ''],
  },
  network: {good: [['devnet', 'devnet']], bad: ['testnet', 'Devnet']},
  ids: {good: [['mainnet', 'mainnet']], bad: ['testnet']},
  runtime: {good: [['host', 'host']], bad: ['docker']},
  pull: {good: [['never', 'never']], bad: ['sometimes']},
  host: {good: [['k8s.dev.nos.ci', 'k8s.dev.nos.ci']], bad: ['https://k8s.dev.nos.ci', 'a b']},
  text: {good: [['anything at all', 'anything at all']], bad: ['']},
  bytes: {
    good: [
      ['1024', 1024],
      ['67108864', 67_108_864],
    ],
    bad: ['1023', '64MiB', '-2048', '2048.5'],
  },
  nodes: {
    good: [
      ['04', 4],
      ['16', 16],
    ],
    bad: ['0', '17', 'x', '-1', '2.5'],
  },
  gpus: {good: [['0', 0]], bad: ['-1', 'many']},
  streak: {good: [['8', 8]], bad: ['0', '-1', '2.5', 'many']},
  held: {
    good: [
      ['1', 1],
      ['1000', 1000],
    ],
    bad: ['0', '1001', '-1', '2.5', 'many'],
  },
  port: {
    good: [
      ['0', 0],
      ['65535', 65_535],
    ],
    bad: ['65536', '-1', '80.5'],
  },
  rpcPort: {good: [['28899', 28_899]], bad: ['65535']},
}

describe('settings: one parser per kind', () => {
  for (const kind of Object.keys(KINDS) as KindName[]) {
    it(`${kind}: reads what it takes, refuses the rest, and reads back what it writes`, () => {
      for (const [text, value] of SAMPLES[kind].good) {
        const reading = readKind(kind, text, '/cwd')
        assert.ok('value' in reading, `${kind} takes ${JSON.stringify(text)}`)
        assert.deepEqual(reading.value, value)
        const written = (KINDS[kind] as {write(value: unknown): string}).write(reading.value)
        assert.deepEqual(readKind(kind, written, '/cwd'), {value}, `${kind} reads back ${written}`)
      }
      for (const text of SAMPLES[kind].bad) {
        const reading = readKind(kind, text, '/cwd')
        assert.ok('why' in reading, `${kind} refuses ${JSON.stringify(text)}`)
      }
    })
  }

  it('makes a relative path absolute from the working directory given', () => {
    assert.deepEqual(readKind('path', 'keys/w.json', '/home/me'), {value: '/home/me/keys/w.json'})
  })
})

describe('settings: a spelling is taken everywhere or nowhere', () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir('gpunet-kinds-')
  })
  afterEach(() => removeDir(dir))

  /** What the resolver makes of `text` given to `key` through its variable, and through the config file. */
  function typedFrom(key: SettingKey, text: string) {
    const spec = SETTINGS[key]
    const env: NodeJS.ProcessEnv = {XDG_CONFIG_HOME: dir, HOME: dir, [spec.env]: text}
    const fromEnv = () => resolveSettings({network: 'devnet', env}).typed(key)?.value
    mkdirSync(join(dir, 'gpunet'), {recursive: true})
    const section = key === 'network' || key === 'wallet' ? {} : {[key]: text}
    writeFileSync(join(dir, 'gpunet', 'config.json'), JSON.stringify({version: 2, networks: {devnet: section}}))
    const fromFile = () =>
      resolveSettings({network: 'devnet', env: {XDG_CONFIG_HOME: dir, HOME: dir}}).typed(key)?.value
    return {fromEnv, fromFile: key === 'network' || key === 'wallet' ? fromEnv : fromFile}
  }

  for (const key of SETTING_KEYS) {
    const {kind} = SETTINGS[key]
    it(`${key} (${kind}): config set, the environment and the config file agree`, () => {
      for (const [text, value] of SAMPLES[kind].good) {
        const stored = checkValue(key, text, '/cwd')
        const {fromEnv, fromFile} = typedFrom(key, text)
        if (kind !== 'path') assert.deepEqual(fromEnv(), value, `${key}=${text} from the environment`)
        assert.deepEqual(readKind(kind, stored, '/cwd'), {value}, `${key} stored as ${stored}`)
        if (kind !== 'path') assert.deepEqual(fromFile(), value, `${key}=${text} from the config file`)
      }
      for (const text of SAMPLES[kind].bad) {
        if (text === '') continue // the empty text is no value: an unset variable, `config unset`
        assert.throws(
          () => checkValue(key, text),
          (error) => isGpunetError(error) && error.exitCode === 2,
        )
        const {fromEnv} = typedFrom(key, text)
        assert.throws(fromEnv, (error) => {
          assert.ok(isGpunetError(error))
          assert.equal(error.exitCode, 2)
          assert.equal(error.code, `${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}_invalid`)
          assert.match(error.hint ?? '', new RegExp(`env ${SETTINGS[key].env}`), 'the hint names where it is set')
          return true
        })
      }
    })
  }

  it('reads a bad value only when a command takes it: `config list` still shows it', () => {
    const env = {XDG_CONFIG_HOME: dir, HOME: dir, GPUNET_PRIORITY_FEE: 'yes'}
    const settings = resolveSettings({network: 'devnet', env})
    const row = settingsInForce(settings).find((setting) => setting.key === 'priorityFee')
    assert.deepEqual(row, {
      key: 'priorityFee',
      value: 'yes',
      set: true,
      source: 'env GPUNET_PRIORITY_FEE',
      env: 'GPUNET_PRIORITY_FEE',
    })
    assert.throws(() => settings.typed('priorityFee'), /priorityFee must be true or false \(or 1 or 0\), not "yes"/)
  })

  it('names a flag in its own words, without a hint (the value is in the message)', () => {
    const settings = resolveSettings({network: 'devnet', flags: {maxPriorityFee: '-1'}, env: {HOME: dir}})
    assert.throws(
      () => settings.typed('maxPriorityFee'),
      (error) =>
        isGpunetError(error) &&
        error.message ===
          '--max-priority-fee must be an amount of SOL such as 0.001, with at most 9 decimals, not "-1"' &&
        error.hint === undefined,
    )
  })

  it('never prints a credential: hidden in config list and in its own error', () => {
    assert.deepEqual(
      [...SECRET_SETTINGS].sort(),
      ['managerApiKey', 'managerDatabaseUrl', 'pinataJwt', 'secretsDatabaseUrl', 'secretsKey'].sort(),
    )
    const env: NodeJS.ProcessEnv = {HOME: dir, XDG_CONFIG_HOME: dir}
    for (const key of SECRET_SETTINGS) env[SETTINGS[key].env] = `secret-${key}`
    const rows = settingsInForce(resolveSettings({network: 'devnet', env}))
    for (const row of rows) if (isSecretSetting(row.key)) assert.equal(row.value, null, row.key)
    assert.throws(
      () => checkValue('secretsKey', ''),
      (error) => isGpunetError(error) && !error.message.includes('secret-'),
    )
  })

  it('takes every setting that names a flag from that flag, and no other flag of the same name', () => {
    for (const key of SETTING_KEYS) {
      const flag = (SETTINGS[key] as {flag?: string}).flag
      if (flag === undefined) continue
      const name = flag.slice(2)
      const declared = {[name]: SETTING_FLAGS[key]}
      assert.ok(SETTING_FLAGS[key], `${key}: ${flag} is in SETTING_FLAGS`)
      assert.deepEqual(settingFlagValues(declared, {[name]: 'x'}), {[key]: 'x'}, key)
      assert.deepEqual(settingFlagValues({[name]: {}}, {[name]: 'x'}), {}, `another ${flag} is not ${key}`)
    }
  })
})

describe('settings: flags of seconds', () => {
  it('take a duration or a bare number of seconds, and refuse what is under their bound', async () => {
    const flag = secondsFlag({description: 'how long', default: 1800}) as unknown as {
      parse(input: string): Promise<number>
      default: number
    }
    assert.equal(await flag.parse('10m'), 600)
    assert.equal(await flag.parse('600'), 600)
    assert.equal(await flag.parse('1h30m'), 5400)
    assert.equal(flag.default, 1800)
    await assert.rejects(flag.parse('0'), /must be at least 1 s, not "0"/)
    await assert.rejects(flag.parse('1500ms'), /must be a duration such as 600 \(seconds\)/)
  })
})
