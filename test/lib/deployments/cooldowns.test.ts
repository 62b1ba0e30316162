/**
 * The manager's cooldowns (src/lib/deployments/cooldowns.ts): one ladder min(base x multiplier^n, max), the
 * network's defaults, and settings that are not positive refused naming the setting (exit 2) before anything starts.
 */
import {strict as assert} from 'node:assert'

import {
  checkCooldowns,
  cooldownMs,
  cooldownsFromSettings,
  DEFAULT_COOLDOWNS,
} from '../../../src/lib/deployments/cooldowns.js'
import {startDeploymentManager} from '../../../src/lib/deployments/manager.js'
import {ExitCode, isGpunetError} from '../../../src/lib/errors.js'
import type {MarketNetwork} from '../../../src/lib/market/connect.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {existsSync, readdirSync} from 'node:fs'

/** The settings of an environment alone (no config file). */
function settingsOf(env: Record<string, string>) {
  const dir = tempDir('gpunet-cooldowns-')
  try {
    return resolveSettings({network: 'localnet', env: {XDG_CONFIG_HOME: dir, HOME: dir, ...env}})
  } finally {
    removeDir(dir)
  }
}

const refusedNaming = (setting: string) => (error: unknown) =>
  isGpunetError(error) && error.exitCode === ExitCode.USAGE && error.message.includes(setting)

describe('manager cooldowns', () => {
  it("the network's defaults: retry 30 s doubling to 10 min, funds 10 min to 6 h, rapid 60 s to 1 h, streak 8", () => {
    const steps = (ladder: keyof Omit<typeof DEFAULT_COOLDOWNS, 'maxStreak'>) =>
      Array.from({length: 7}, (_, n) => cooldownMs(n, DEFAULT_COOLDOWNS[ladder]) / 1000)
    assert.deepEqual(steps('retry'), [30, 60, 120, 240, 480, 600, 600])
    assert.deepEqual(steps('insufficientFunds'), [600, 1200, 2400, 4800, 9600, 19_200, 21_600])
    assert.deepEqual(steps('rapidCompletion'), [60, 120, 240, 480, 960, 1920, 3600])
    assert.equal(DEFAULT_COOLDOWNS.maxStreak, 8)
    assert.equal(cooldownMs(10_000, DEFAULT_COOLDOWNS.retry), 600_000, 'a long streak stays at the max')
    assert.equal(cooldownMs(-1, DEFAULT_COOLDOWNS.retry), 30_000)
  })

  it('the settings give each number; the rest keep the defaults', () => {
    const cooldowns = cooldownsFromSettings(
      settingsOf({
        GPUNET_MANAGER_RETRY_COOLDOWN_BASE: '5s',
        GPUNET_MANAGER_FUNDS_COOLDOWN_MAX: '1h',
        GPUNET_MANAGER_RAPID_COOLDOWN_MULTIPLIER: '1.5',
        GPUNET_MANAGER_RAPID_MAX_STREAK: '3',
      }),
    )
    assert.deepEqual(cooldowns.retry, {...DEFAULT_COOLDOWNS.retry, baseMs: 5000})
    assert.deepEqual(cooldowns.insufficientFunds, {...DEFAULT_COOLDOWNS.insufficientFunds, maxMs: 3_600_000})
    assert.deepEqual(cooldowns.rapidCompletion, {...DEFAULT_COOLDOWNS.rapidCompletion, multiplier: 1.5})
    assert.equal(cooldowns.maxStreak, 3)
    assert.deepEqual(cooldownsFromSettings(settingsOf({})), DEFAULT_COOLDOWNS)
  })

  it('a setting that is not positive is exit 2 naming it', () => {
    for (const [env, value, setting] of [
      ['GPUNET_MANAGER_RETRY_COOLDOWN_BASE', '0', 'managerRetryCooldownBase'],
      ['GPUNET_MANAGER_RETRY_COOLDOWN_MAX', '-5s', 'managerRetryCooldownMax'],
      ['GPUNET_MANAGER_FUNDS_COOLDOWN_MULTIPLIER', '0', 'managerFundsCooldownMultiplier'],
      ['GPUNET_MANAGER_RAPID_COOLDOWN_BASE', 'soon', 'managerRapidCooldownBase'],
      ['GPUNET_MANAGER_RAPID_MAX_STREAK', '0', 'managerRapidMaxStreak'],
    ] as const)
      assert.throws(() => cooldownsFromSettings(settingsOf({[env]: value})), refusedNaming(setting), `${env}=${value}`)
    // A library caller's numbers: the setting named too.
    assert.throws(() => checkCooldowns({retry: {baseMs: 0}}), refusedNaming('managerRetryCooldownBase'))
    assert.throws(() => checkCooldowns({insufficientFunds: {maxMs: -1}}), refusedNaming('managerFundsCooldownMax'))
    assert.throws(
      () => checkCooldowns({rapidCompletion: {multiplier: Number.NaN}}),
      refusedNaming('managerRapidCooldownMultiplier'),
    )
    assert.throws(() => checkCooldowns({maxStreak: 2.5}), refusedNaming('managerRapidMaxStreak'))
  })

  it('startDeploymentManager with a bad cooldown starts nothing: no database, no key, no lock', async () => {
    const dir = tempDir('gpunet-cooldowns-manager-')
    try {
      await assert.rejects(
        startDeploymentManager({
          dataDir: dir,
          net: {} as MarketNetwork,
          network: 'localnet',
          cooldowns: {retry: {multiplier: 0}},
        }),
        refusedNaming('managerRetryCooldownMultiplier'),
      )
      assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], [])
    } finally {
      removeDir(dir)
    }
  })
})
