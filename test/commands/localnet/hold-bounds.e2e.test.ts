/**
 * `localnet start --max-held N --hold-timeout DURATION` through the CLI: a bad bound is exit 2 with the bounds said
 * (no stack trace, the code under --json), before anything starts; the environment's the same, naming its variable.
 * The parsing and the path to the gateway are hold-settings.test.ts'.
 */
import {strict as assert} from 'node:assert'
import {existsSync} from 'node:fs'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'

describe('gpunet localnet start --max-held, --hold-timeout', function () {
  this.timeout(60_000)
  let box: CliSandbox

  beforeEach(() => {
    box = cliSandbox()
  })
  afterEach(async () => {
    await box.cleanup()
  })

  const cases: [flag: string, bad: string, says: string, code: string][] = [
    ['--max-held', '0', 'a whole number of requests from 1 to 1000', 'max_held_invalid'],
    ['--max-held', '1001', 'a whole number of requests from 1 to 1000', 'max_held_invalid'],
    ['--hold-timeout', '31m', 'a duration from 1s to 30m such as 120s or 10m', 'hold_timeout_invalid'],
    ['--hold-timeout', 'soon', 'a duration from 1s to 30m such as 120s or 10m', 'hold_timeout_invalid'],
  ]
  for (const [flag, bad, says, code] of cases)
    it(`refuses ${flag} ${bad} with exit 2 and says the bounds, before starting anything`, async () => {
      const human = await box.run(['localnet', 'start', '--detach', flag, bad])
      assert.equal(human.code, 2, human.stderr)
      assert.match(human.stderr, new RegExp(`${flag} must be ${says}, not "${bad}"`))
      assert.doesNotMatch(human.stderr, /\n\s+at /, 'no stack trace')
      const json = await box.run(['localnet', 'start', '--detach', flag, bad, '--json'])
      assert.equal(json.code, 2)
      assert.equal((JSON.parse(json.stdout) as {error: {code: string}}).error.code, code)
      assert.equal(existsSync(box.dataDir), false, 'nothing was created')
    })

  it('refuses a bad GPUNET_HOLD_TIMEOUT the same way, naming where it is set', async () => {
    const answer = await runCli(['localnet', 'start', '--detach'], {env: {...box.env, GPUNET_HOLD_TIMEOUT: '2h'}})
    assert.equal(answer.code, 2, answer.stderr)
    assert.match(answer.stderr, /holdTimeout must be a duration from 1s to 30m such as 120s or 10m, not "2h"/)
    assert.match(answer.stderr, /GPUNET_HOLD_TIMEOUT/)
  })
})
