/**
 * An exposed port outside TCP's range (issue 59): it was only a warning, so `job post` paid for the job, which then
 * failed at its node. Now the definition is refused first (exit 3), and nothing is paid.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {type CliSandbox, cliSandbox, type SandboxChain, sandboxChain} from '../../helpers/cli-localnet.js'

describe('gpunet job post refuses an exposed port outside 1-65535 before paying', function () {
  this.timeout(90_000)
  let box: CliSandbox
  let chain: SandboxChain
  let file: string

  before(async () => {
    box = cliSandbox()
    file = join(box.dir, 'job.json')
    const op = {id: 'serve', type: 'container/run', args: {image: 'ubuntu', expose: 99999}}
    writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops: [op]}, null, 2))
    assert.equal((await box.run(['localnet', 'start', '--detach', '--no-node'])).code, 0)
    chain = await sandboxChain(box)
  })
  after(async () => {
    await box.cleanup()
  })

  it('job post: exit 3, the port named with a hint, the balance untouched; job validate: invalid', async () => {
    const before = await chain.connection.getBalance(chain.wallet.publicKey)
    const human = await box.run(['job', 'post', '--file', file, '--queue-anyway'])
    assert.equal(human.code, 3, human.stderr)
    assert.equal(human.stdout, '')
    assert.match(human.stderr, /job\.json:\d+:\d+ ops\[0\]\.args\.expose: port 99999 is not a TCP port/)
    assert.match(human.stderr, /nothing was uploaded or sent/)
    assert.equal(await chain.connection.getBalance(chain.wallet.publicKey), before)

    const json = await box.run(['job', 'post', '--file', file, '--queue-anyway', '--json'])
    assert.equal(json.code, 3)
    const {error} = JSON.parse(json.stdout) as {error: {code: string; errors: {code: string; hint?: string}[]}}
    assert.equal(error.code, 'invalid_definition')
    assert.deepEqual(
      error.errors.map((e) => e.code),
      ['port_out_of_range'],
    )
    assert.match(error.errors[0]!.hint ?? '', /the port the container listens on/)

    const validated = await box.run(['job', 'validate', file, '--json'])
    assert.equal(validated.code, 3, validated.stdout)
    const report = JSON.parse(validated.stdout) as {valid: boolean; files: {errors: {code: string}[]}[]}
    assert.equal(report.valid, false)
    assert.deepEqual(
      report.files[0]!.errors.map((e) => e.code),
      ['port_out_of_range'],
    )
  })
})
