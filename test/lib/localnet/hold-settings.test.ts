/**
 * The localnet gateway's hold bounds (`localnet start --max-held N --hold-timeout DURATION`, GPUNET_MAX_HELD,
 * GPUNET_HOLD_TIMEOUT): read by their kinds (exit 2 on a bad one), handed to the gateway through the node's options,
 * written into the startArgs a background localnet is started with, and read back from them.
 */
import {strict as assert} from 'node:assert'

import {isGpunetError} from '../../../src/lib/errors.js'
import {HOLD_MS, MAX_HELD, MAX_HELD_LIMIT, MAX_HOLD_MS} from '../../../src/lib/gateway/holding.js'
import {readStartArgs, startDifferences} from '../../../src/lib/localnet/server/start-args.js'
import {holdBounds, nodeOptions, startArgs} from '../../../src/lib/localnet/server/start-settings.js'
import {HOLD_SETTING_BOUNDS} from '../../../src/lib/settings/kinds.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {removeDir, tempDir} from '../../helpers/files.js'

describe("the localnet gateway's hold bounds (--max-held, --hold-timeout)", () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir('gpunet-hold-')
  })
  afterEach(() => removeDir(dir))
  const settings = (flags: Record<string, string> = {}, env: Record<string, string> = {}) =>
    resolveSettings({network: 'localnet', flags, env: {HOME: dir, XDG_CONFIG_HOME: dir, ...env}})

  it("bounds the settings as the gateway bounds them (holding.ts' limits)", () => {
    assert.deepEqual(HOLD_SETTING_BOUNDS, {maxHeld: MAX_HELD_LIMIT, minHoldMs: 1000, maxHoldMs: MAX_HOLD_MS})
  })

  it('hands the bounds set to the gateway and writes them into the startArgs, which read them back', () => {
    const set = settings({maxHeld: '20', holdTimeout: '10m'})
    assert.deepEqual(nodeOptions(set, true, () => {})?.hold, {maxHeld: 20, holdMs: 600_000})
    const args = startArgs(set, true)
    assert.deepEqual(args.slice(args.indexOf('--max-held')), ['--max-held', '20', '--hold-timeout', '600000ms'])
    const read = readStartArgs(args)
    assert.deepEqual([read.maxHeld, read.holdMs], [20, 600_000])
    // From the environment the same.
    const fromEnv = settings({}, {GPUNET_MAX_HELD: '5', GPUNET_HOLD_TIMEOUT: '30s'})
    assert.deepEqual(holdBounds(fromEnv), {maxHeld: 5, holdMs: 30_000})
  })

  it("leaves a bound not set to the gateway's default, and out of the startArgs", () => {
    const unset = settings()
    assert.deepEqual(holdBounds(unset), {})
    const args = startArgs(unset, true)
    assert.equal(args.includes('--max-held') || args.includes('--hold-timeout'), false)
    const read = readStartArgs(args)
    assert.deepEqual([read.maxHeld, read.holdMs], [MAX_HELD, HOLD_MS])
    assert.deepEqual(holdBounds(settings({holdTimeout: '90s'})), {holdMs: 90_000})
  })

  const refusals: [string, string, RegExp][] = [
    ['maxHeld', '0', /^--max-held must be a whole number of requests from 1 to 1000, not "0"$/],
    ['maxHeld', '1001', /^--max-held must be a whole number of requests from 1 to 1000, not "1001"$/],
    ['maxHeld', 'many', /^--max-held must be/],
    ['holdTimeout', '999ms', /^--hold-timeout must be a duration from 1s to 30m such as 120s or 10m, not "999ms"$/],
    ['holdTimeout', '31m', /^--hold-timeout must be a duration from 1s to 30m/],
    ['holdTimeout', 'soon', /^--hold-timeout must be a duration from 1s to 30m/],
  ]
  for (const [key, bad, message] of refusals)
    it(`refuses ${key} ${bad}: exit 2, before anything starts`, () => {
      assert.throws(
        () => startArgs(settings({[key]: bad}), true),
        (error) => {
          assert.ok(isGpunetError(error))
          assert.equal(error.exitCode, 2)
          assert.equal(error.code, key === 'maxHeld' ? 'max_held_invalid' : 'hold_timeout_invalid')
          assert.match(error.message, message)
          return true
        },
      )
    })

  it('refuses a bad GPUNET_MAX_HELD or GPUNET_HOLD_TIMEOUT, naming where it is set', () => {
    for (const [env, value] of [
      ['GPUNET_MAX_HELD', '-3'],
      ['GPUNET_HOLD_TIMEOUT', '2h'],
    ] as const)
      assert.throws(
        () => nodeOptions(settings({}, {[env]: value}), true, () => {}),
        (error) => isGpunetError(error) && error.exitCode === 2 && (error.hint ?? '').includes(`env ${env}`),
      )
  })

  it('a second start asking for other bounds than the running localnet is said, as it runs and as given', () => {
    const defaults = ['--runtime', 'auto', '--gateway-port', '28980', '--pull', 'missing']
    const running = {args: [...defaults, '--max-held', '20'], port: 28899, gatewayPort: 28980}
    const wanted = (args: string[], given: string[]) => ({args, port: 28899, given: new Set(given)})
    assert.deepEqual(
      startDifferences(
        running,
        wanted([...defaults, '--max-held', '50', '--hold-timeout', '600000ms'], ['max-held', 'hold-timeout']),
      ),
      [
        {flag: 'max-held', running: '--max-held 20', given: '--max-held 50'},
        {flag: 'hold-timeout', running: '--hold-timeout 120s', given: '--hold-timeout 600s'},
      ],
    )
    assert.deepEqual(startDifferences(running, wanted([...defaults, '--max-held', '20'], ['max-held'])), [])
  })
})
