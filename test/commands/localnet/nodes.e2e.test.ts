import {strict as assert} from 'node:assert'
import {existsSync} from 'node:fs'

import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'

describe('gpunet localnet start --nodes', function () {
  this.timeout(60_000)
  let box: CliSandbox

  beforeEach(() => {
    box = cliSandbox()
  })
  afterEach(async () => {
    await box.cleanup()
  })

  for (const bad of ['0', '17', 'x', '-1', '2.5'])
    it(`refuses --nodes ${bad} with exit 2 and says the bounds, before starting anything`, async () => {
      const human = await box.run(['localnet', 'start', '--detach', '--nodes', bad])
      assert.equal(human.code, 2, human.stderr)
      assert.match(human.stderr, new RegExp(`nodes must be a whole number of nodes from 1 to 16, not "${bad}"`))
      assert.doesNotMatch(human.stderr, /\n\s+at /, 'no stack trace')
      const json = await box.run(['localnet', 'start', '--detach', '--nodes', bad, '--json'])
      assert.equal(json.code, 2)
      assert.equal((JSON.parse(json.stdout) as {error: {code: string}}).error.code, 'nodes_invalid')
      assert.equal(existsSync(box.dataDir), false, 'nothing was created')
    })

  it('refuses a bad GPUNET_LOCALNET_NODES the same way, naming where it is set', async () => {
    const answer = await runCli(['localnet', 'start', '--detach'], {env: {...box.env, GPUNET_LOCALNET_NODES: '99'}})
    assert.equal(answer.code, 2)
    assert.match(answer.stderr, /nodes must be a whole number of nodes from 1 to 16, not "99"/)
    assert.match(answer.stderr, /GPUNET_LOCALNET_NODES/)
  })

  it('`config set nodes` refuses 17 and keeps 3, which a start then runs; status lists the nodes', async function () {
    if (!existsSync('/bin/busybox')) this.skip()
    const refused = await box.run(['config', 'set', 'nodes', '17', '--network', 'localnet'])
    assert.equal(refused.code, 2)
    const set = await box.run(['config', 'set', 'nodes', '3', '--network', 'localnet'])
    assert.equal(set.code, 0, set.stderr)
    const started = await box.run(['localnet', 'start', '--detach', '--runtime', 'host', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const status = JSON.parse(started.stdout) as LocalnetStatus
    assert.equal(status.nodes.length, 3)
    assert.equal(new Set(status.nodes.map((n) => n.address)).size, 3)
    for (const node of status.nodes) {
      const {address, state, job, slug, left} = node
      assert.deepEqual(
        {address, state, job, slug, left},
        {address: node.address, state: 'idle', job: null, slug: 'localnet', left: false},
      )
    }
    const human = await box.run(['localnet', 'status'])
    assert.equal(human.code, 0)
    assert.match(human.stdout, /Node\s+3 nodes \(host-process/)
    const port = new URL(status.gatewayUrl!).port
    assert.ok(
      human.stdout.includes(
        `Gateway      http://<job>.node.localhost:${port}/, a deployment at http://<deployment>.deploy.localhost:${port}/`,
      ),
      human.stdout,
    )
    for (const [i, node] of status.nodes.entries())
      assert.match(human.stdout, new RegExp(`${i + 1}\\. ${node.address}  idle`))
  })
})
