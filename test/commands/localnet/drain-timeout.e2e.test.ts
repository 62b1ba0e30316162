import {strict as assert} from 'node:assert'
import {existsSync} from 'node:fs'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'

describe('gpunet localnet start --drain-timeout', function () {
  this.timeout(60_000)
  let box: CliSandbox

  beforeEach(() => {
    box = cliSandbox()
  })
  afterEach(async () => {
    await box.cleanup()
  })

  for (const bad of ['0s', '999ms', '25h', '600', 'soon'])
    it(`refuses --drain-timeout ${bad} with exit 2 and says the bounds, before starting anything`, async () => {
      const human = await box.run(['localnet', 'start', '--detach', '--drain-timeout', bad])
      assert.equal(human.code, 2, human.stderr)
      assert.match(human.stderr, new RegExp(`must be a duration from 1s to 24h such as 10m or 90s, not "${bad}"`))
      assert.doesNotMatch(human.stderr, /\n\s+at /, 'no stack trace')
      const json = await box.run(['localnet', 'start', '--detach', '--drain-timeout', bad, '--json'])
      assert.equal(json.code, 2)
      assert.equal((JSON.parse(json.stdout) as {error: {code: string}}).error.code, 'drain_timeout_invalid')
      assert.equal(existsSync(box.dataDir), false, 'nothing was created')
    })

  it('refuses a bad GPUNET_DRAIN_TIMEOUT the same way, naming where it is set', async () => {
    const answer = await runCli(['localnet', 'start', '--detach'], {env: {...box.env, GPUNET_DRAIN_TIMEOUT: '2d'}})
    assert.equal(answer.code, 2)
    assert.match(answer.stderr, /must be a duration from 1s to 24h such as 10m or 90s, not "2d"/)
    assert.match(answer.stderr, /GPUNET_DRAIN_TIMEOUT/)
  })
})
