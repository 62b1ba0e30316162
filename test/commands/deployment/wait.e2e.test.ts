/**
 * What a script meets with deployments on a localnet (issue 59): more replicas than the localnet's nodes is warned
 * of, with the `--nodes` to run; `deployment start --wait` returns once every replica serves, and `revise --wait`
 * of a revision that fails is exit 8 once it is rolled back (it was exit 0 at once, and the rollback came later).
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'

interface Warned {
  id: string
  status: string
  replicas: number
  active_revision: number
  warnings?: {code: string; message: string; hint: string}[]
}

describe('gpunet deployment: replicas beyond the nodes, start --wait, revise --wait (end to end)', function () {
  this.timeout(300_000)
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  const cli = (args: string[]) => runCli(args, {env, cwd: box.dir})
  const definition = (name: string, cmd: string) =>
    writeFileSync(
      join(box.dir, name),
      JSON.stringify({
        version: '0.1',
        type: 'container',
        ops: [{id: 'svc', type: 'container/run', args: {image: 'ubuntu', cmd: ['sh', '-c', cmd]}}],
      }),
    )

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    env = {...box.env, GPUNET_GATEWAY_PORT: '0'}
    const started = await cli(['localnet', 'start', '--detach', '--runtime', 'host', '--nodes', '2', '--json'])
    assert.equal(started.code, 0, started.stderr)
    definition('svc.json', 'echo replica up; sleep 600')
    definition('broken.json', 'echo broken; exit 1')
  })
  after(async () => {
    await box?.cleanup()
  })

  it('warns of replicas beyond the nodes; start --wait serves; revise --wait of a failing revision exits 8', async () => {
    // Three replicas on two nodes: one would stay QUEUED. Warned on stderr and in --json, with the --nodes to run.
    const args = [
      'deployment',
      'create',
      '--file',
      'svc.json',
      '--replicas',
      '3',
      '--strategy',
      'SIMPLE-EXTEND',
      '--timeout',
      '10m',
    ]
    const created = await cli([...args, '--json'])
    assert.equal(created.code, 0, created.stderr)
    const draft = JSON.parse(created.stdout) as Warned
    assert.deepEqual(draft.warnings, [
      {
        code: 'replicas_beyond_nodes',
        message: '3 replicas, but the localnet runs 2 nodes, one job each: 1 of them would stay QUEUED',
        hint: 'run as many nodes: gpunet localnet stop && gpunet localnet start --detach --nodes 3',
      },
    ])
    assert.match(created.stderr, /Warning: 3 replicas, but the localnet runs 2 nodes/)
    const {id} = draft
    // Scaled down to one: no warning left.
    const scaled = await cli(['deployment', 'scale', id, '1', '--json'])
    assert.equal(scaled.code, 0, scaled.stderr)
    assert.equal((JSON.parse(scaled.stdout) as Warned).warnings, undefined)
    const again = await cli(['deployment', 'scale', id, '4'])
    assert.equal(again.code, 0, again.stderr)
    assert.match(
      again.stderr,
      /Warning: 4 replicas, but the localnet runs 2 nodes, one job each: 2 of them would stay QUEUED/,
    )
    assert.match(
      again.stderr,
      /Hint: run as many nodes: gpunet localnet stop && gpunet localnet start --detach --nodes 4/,
    )
    assert.equal((await cli(['deployment', 'scale', id, '1'])).code, 0)

    const funded = await cli(['deployment', 'fund', id, '--sol', '0.2', '--tokens', '50'])
    assert.equal(funded.code, 0, funded.stderr)
    const started = await cli(['deployment', 'start', id, '--wait', '--wait-timeout', '120', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const serving = JSON.parse(started.stdout) as Warned
    assert.equal(serving.status, 'RUNNING')
    const jobs = JSON.parse((await cli(['deployment', 'jobs', id, '--state', 'RUNNING', '--json'])).stdout) as {
      jobs: unknown[]
    }
    assert.equal(jobs.jobs.length, 1)

    // A revision that serves: --wait returns once it does, exit 0.
    const fixed = await cli(['deployment', 'revise', id, '--file', 'svc.json', '--wait', '--wait-timeout', '180'])
    const events = async () => (await cli(['deployment', 'events', id])).stdout
    assert.equal(fixed.code, 0, `${fixed.stderr}${await events()}`)
    assert.match(fixed.stdout, /^Revision 2 of deployment \S+ serves: 1 of 1 replicas ready\.$/m)

    // A revision whose replica fails at once: rolled back, and --wait says so with exit 8.
    const revised = await cli([
      'deployment',
      'revise',
      id,
      '--file',
      'broken.json',
      '--wait',
      '--wait-timeout',
      '180',
      '--json',
    ])
    assert.equal(revised.code, 8, `${revised.stderr}${revised.stdout}`)
    const {error} = JSON.parse(revised.stdout) as {error: {code: string; message: string; revision: number}}
    assert.equal(error.code, 'revision_rolled_back')
    assert.equal(error.revision, 3)
    assert.match(error.message, /revision 3 of deployment \S+ was rolled back: revision 3 rolled back to 2/)
    const after = JSON.parse((await cli(['deployment', 'get', id, '--json'])).stdout) as Warned
    assert.equal(after.active_revision, 2)

    assert.equal((await cli(['deployment', 'stop', id, '--yes'])).code, 0)
  })
})
