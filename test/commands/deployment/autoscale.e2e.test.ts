/**
 * Autoscaling's policy and budget end to end through the built CLI, against the localnet's own manager and chain
 * (host processes): create with a policy and a budget, every bad input exit 2 with nothing created or changed (the
 * budget under one listing's deposit read from the localnet's market by the manager), autoscale changing one member
 * and keeping the others, get's autoscale_status, scale ending the policy, --off, and the network's hosted manager
 * refused before anything is sent. The traffic-driven loop is gateway-autoscale's (the traffic side's) test.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'

interface Policy {
  min_replicas: number
  max_replicas: number
  target_concurrency: number
  scale_down_after: number
}
interface Deployment {
  id: string
  replicas: number
  strategy: string
  autoscale?: Policy
  budget?: number
  autoscale_status?: {policy: Policy | null; spend: {token_base_units: string; budget_base_units: string | null}}
  scaled?: {autoscale_ended: boolean}
}

describe('deployment autoscale: the policy and budget through the CLI and the localnet manager', function () {
  this.timeout(180_000)
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  const cli = (args: string[]) => runCli(args, {env, cwd: box.dir})
  const json = async (args: string[]): Promise<Deployment> => {
    const result = await cli([...args, '--json'])
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}${result.stdout}`)
    return JSON.parse(result.stdout) as Deployment
  }
  /** Exit 2 with the error's code under --json. */
  const usage = async (args: string[], code: string) => {
    const result = await cli([...args, '--json'])
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}${result.stdout}`)
    assert.equal((JSON.parse(result.stdout) as {error: {code: string}}).error.code, code, result.stdout)
  }
  const count = async () =>
    (JSON.parse((await cli(['deployment', 'list', '--json'])).stdout) as {deployments: unknown[]}).deployments.length
  const create = ['deployment', 'create', '--file', 'svc.json', '--timeout', '10m']
  const policy = ['--min-replicas', '0', '--max-replicas', '3', '--target-concurrency', '2']

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    env = {...box.env, GPUNET_GATEWAY_PORT: '0'}
    const started = await cli(['localnet', 'start', '--detach', '--runtime', 'host', '--json'])
    assert.equal(started.code, 0, started.stderr)
    writeFileSync(
      join(box.dir, 'svc.json'),
      JSON.stringify({
        version: '0.1',
        type: 'container',
        ops: [{id: 'svc', type: 'container/run', args: {image: 'ubuntu', cmd: ['sh', '-c', 'sleep 600']}}],
      }),
    )
  })
  after(async () => {
    await box?.cleanup()
  })

  it('refuses every bad policy and budget of a create with exit 2, nothing created', async () => {
    await usage([...create, ...policy, '--strategy', 'SIMPLE'], 'policy_strategy')
    await usage([...create, ...policy, '--strategy', 'SCHEDULED', '--schedule', '0 3 * * *'], 'policy_strategy')
    await usage([...create, '--min-replicas', '4', '--max-replicas', '3', '--target-concurrency', '2'], 'min_above_max')
    await usage([...create, '--max-replicas', '101', '--target-concurrency', '2'], 'invalid_max_replicas')
    await usage([...create, '--max-replicas', '3', '--target-concurrency', '0'], 'invalid_target_concurrency')
    await usage([...create, ...policy, '--scale-down-after', '5s'], 'invalid_scale_down_after')
    // One base unit: under any listing's deposit, which only the manager knows (the market's price on chain).
    await usage([...create, ...policy, '--budget', '0.000001'], 'budget_below_deposit')
    assert.equal(await count(), 0)
  })

  it('create with a policy and budget, autoscale one member, get the status, scale ends it, --off', async () => {
    const created = await json([...create, ...policy, '--budget', '100'])
    assert.deepEqual(created.autoscale, {
      min_replicas: 0,
      max_replicas: 3,
      target_concurrency: 2,
      scale_down_after: 300,
    })
    assert.equal(created.budget, 100)
    assert.equal(created.replicas, 1)
    const id = created.id

    // Bad changes: exit 2, the policy as it was.
    await usage(['deployment', 'autoscale', id, '--max-replicas', '101'], 'invalid_max_replicas')
    await usage(['deployment', 'autoscale', id, '--min-replicas', '5'], 'min_above_max')
    await usage(['deployment', 'autoscale', id, '--scale-down-after', '9s'], 'invalid_scale_down_after')
    await usage(['deployment', 'autoscale', id, '--budget', '0.000001'], 'budget_below_deposit')
    await usage(['deployment', 'autoscale', id], 'invalid_flags')
    assert.deepEqual((await json(['deployment', 'get', id])).autoscale, created.autoscale)

    const changed = await json(['deployment', 'autoscale', id, '--scale-down-after', '1m'])
    assert.deepEqual(changed.autoscale, {...created.autoscale, scale_down_after: 60})

    const got = await json(['deployment', 'get', id])
    assert.deepEqual(got.autoscale_status?.policy, changed.autoscale)
    assert.equal(got.autoscale_status?.spend.token_base_units, '0', 'a DRAFT listed nothing')
    assert.equal(got.autoscale_status?.spend.budget_base_units, '100000000')
    const text = await cli(['deployment', 'get', id])
    assert.match(text.stdout, /autoscale: {2}0 to 3 replicas, 2 in flight per replica, down after 60 s/)
    assert.match(text.stdout, /spend: {6}0 tokens of a budget of 100/)

    const scaled = await json(['deployment', 'scale', id, '2'])
    assert.equal(scaled.scaled?.autoscale_ended, true)
    assert.equal(scaled.autoscale, undefined)
    assert.equal(scaled.budget, 100, 'the budget stays')

    await json(['deployment', 'autoscale', id, '--max-replicas', '2', '--target-concurrency', '1'])
    const off = await json(['deployment', 'autoscale', id, '--off'])
    assert.equal(off.autoscale, undefined)
    assert.equal(off.replicas, 2)
  })

  it("refuses a policy against the network's hosted manager before sending anything (exit 2)", async () => {
    const result = await cli([
      'deployment',
      'autoscale',
      'x',
      '--network',
      'mainnet',
      '--max-replicas',
      '3',
      '--target-concurrency',
      '1',
      '--json',
    ])
    assert.equal(result.code, 2, result.stderr + result.stdout)
    const error = (JSON.parse(result.stdout) as {error: {code: string; hint: string}}).error
    assert.equal(error.code, 'autoscale_unsupported')
    assert.match(error.hint, /deployment serve/)
    await usage([...create, ...policy, '--network', 'mainnet'], 'autoscale_unsupported')
  })
})
