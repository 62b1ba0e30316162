/** `gpunet job run` end to end: a one-off command posted to a localnet whose node runs it in podman. */
import {strict as assert} from 'node:assert'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'
import {type ResultViewJson, stdoutOf} from '../../helpers/node.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {requirePodman, TEST_IMAGE} from '../../helpers/podman.js'

interface RunReport {
  job: string
  status: string
  outcome: string | null
  error?: {code: string}
  resultContent: {status: string; opStates: unknown[]} | null
  resultView: ResultViewJson | null
  jobDefinition: {ops: {args: {cmd?: string[]; image: string}}[]}
  dryRun?: true
}

describe('gpunet job run (end to end)', function () {
  this.timeout(120_000)
  requirePodman()
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  const cli = (args: string[]) => runCli(args, {env})

  before(async function () {
    box = cliSandbox()
    env = {...box.env, GPUNET_NODE_PULL: 'never'}
    const started = await cli(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
  })
  after(() => box?.cleanup())

  it('runs a quoted command to its end: the result holds its output, and its failure is exit 8', async () => {
    const saved = join(box.dir, 'built.json')
    const command = ['sh', '-c', 'echo "a b"; exit 3']
    const args = ['job', 'run', '--image', TEST_IMAGE, '--timeout', '300', '--wait', '--wait-timeout', '60']
    const result = await cli([...args, '--save', saved, '--json', '--', ...command])
    assert.equal(result.code, 8, result.stderr)
    const report = JSON.parse(result.stdout) as RunReport
    assert.equal(report.status, 'COMPLETED')
    assert.equal(report.outcome, 'failed')
    assert.equal(report.error?.code, 'job_failed')
    assert.deepEqual(stdoutOf(report.resultView), [{id: 'run', exitCode: 3, stdout: 'a b\n'}])
    assert.deepEqual(report.jobDefinition.ops[0]!.args.cmd, command)
    // The definition it built is a real one: `job validate` passes it, and it is what --json reported.
    assert.deepEqual(JSON.parse(readFileSync(saved, 'utf8')), report.jobDefinition)
    const validated = await cli(['job', 'validate', saved])
    assert.equal(validated.code, 0, validated.stdout + validated.stderr)
  })

  it('--dry-run prints the definition and the quote, and posts nothing', async () => {
    const result = await cli(['job', 'run', '--image', TEST_IMAGE, '--dry-run', '--', 'echo', 'hi there'])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /^Definition:$/m)
    assert.match(result.stdout, /"image": "localhost\/gpunet-test-busybox:latest"/)
    assert.match(result.stdout, /"hi there"/)
    assert.match(result.stdout, /nothing was uploaded or sent/)
    const json = JSON.parse((await cli(['job', 'run', '--dry-run', '--json', '--', 'true'])).stdout) as RunReport
    assert.equal(json.dryRun, true)
    assert.deepEqual(json.jobDefinition.ops[0]!.args, {image: 'docker.io/library/ubuntu:24.04', cmd: ['true']})
  })

  it('says so when gpunet flags follow --, and passes them to the command all the same', async () => {
    const result = await cli(['job', 'run', '--dry-run', '--json', '--', 'sh', '-c', 'x', '--wait'])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stderr, /--wait after -- is passed to the command, not to gpunet/)
    const report = JSON.parse(result.stdout) as RunReport
    assert.deepEqual(report.jobDefinition.ops[0]!.args.cmd, ['sh', '-c', 'x', '--wait'])
  })

  it('refuses --save over an existing file (exit 2) and a bare --env (exit 2), before anything is paid', async () => {
    const existing = join(box.dir, 'mine.json')
    writeFileSync(existing, 'my own work')
    const over = await cli(['job', 'run', '--save', existing, '--', 'true'])
    assert.equal(over.code, 2)
    assert.match(over.stderr, /mine\.json already exists; the definition was not saved/)
    assert.equal(readFileSync(existing, 'utf8'), 'my own work')
    const env = await cli(['job', 'run', '--env', 'HOME', '--json', '--', 'true'])
    assert.equal(env.code, 2)
    assert.equal((JSON.parse(env.stdout) as {error: {code: string}}).error.code, 'env_invalid')
    assert.equal(existsSync(join(box.dir, 'HOME')), false)
  })

  it('refuses an empty --image (exit 2) and a secret that is not stored (exit 3), posting nothing', async () => {
    const empty = await cli(['job', 'run', '--image', '', '--', 'true'])
    assert.equal(empty.code, 2, empty.stderr)
    assert.match(empty.stderr, /--image is empty/)
    const secret = await cli(['job', 'run', '--env', 'TOKEN=%%secrets.NOT_STORED%%', '--', 'true'])
    assert.equal(secret.code, 3, secret.stderr)
    assert.match(secret.stderr, /NOT_STORED/)
    assert.doesNotMatch(empty.stderr + secret.stderr, /Posting the job/)
  })
})
