import {strict as assert} from 'node:assert'
import {createHash, randomBytes} from 'node:crypto'
import {existsSync} from 'node:fs'
import {readFile} from 'node:fs/promises'

import type {JobDefinition, OperationArgs} from '../../../../src/lib/definition/schema.js'
import {isGpunetError} from '../../../../src/lib/errors.js'
import {waitUntilReady} from '../../../../src/lib/node/health.js'
import {type OperationPlan, planOperations, substituteSecrets} from '../../../../src/lib/node/operation-plan.js'
import {
  authFileText,
  containerName,
  envFileText,
  NO_GPU_NOTICE,
  podmanRunArgs,
  PodmanRuntime,
  PULL_FAILURE_HINT,
} from '../../../../src/lib/node/runtime/podman.js'
import type {RunningOperation} from '../../../../src/lib/node/runtime/runtime.js'
import {podman, requirePodman, TEST_IMAGE, TEST_IMAGE_WITH_BASH} from '../../../helpers/podman.js'

function plan(args: Partial<OperationArgs>, id = 'op'): OperationPlan {
  const definition: JobDefinition = {
    version: '0.1',
    type: 'container',
    ops: [{id, type: 'container/run', args: {image: TEST_IMAGE, ...args}}],
  }
  return planOperations(definition)[0] as OperationPlan
}

const jobId = `test-${process.pid}`

describe('podman run arguments', () => {
  const setup = {
    name: 'n',
    jobId: 'j',
    envFile: '/tmp/x/env',
    cidFile: '/tmp/x/cid',
    ports: [],
    gpu: false,
    pull: 'never' as const,
  }

  it('gives GPUs only when asked and available', () => {
    const gpuPlan = plan({gpu: true, cmd: []})
    assert.ok(
      podmanRunArgs(gpuPlan, {...setup, gpu: true})
        .join(' ')
        .includes('--device nvidia.com/gpu=all'),
    )
    assert.ok(!podmanRunArgs(gpuPlan, setup).includes('--device'))
  })

  it('passes the entrypoint as a JSON word list, the image after "--", the command as given', () => {
    const args = podmanRunArgs(plan({entrypoint: '/bin/my tool', cmd: ['-x', 'a b']}), setup)
    assert.equal(args[args.indexOf('--entrypoint') + 1], '["/bin/my tool"]')
    assert.deepEqual(args.slice(-4), ['--', TEST_IMAGE, '-x', 'a b'])
  })

  it('names containers readably and uniquely per job and operation', () => {
    assert.match(containerName('Job1', 'train model'), /^gpunet-Job1-train_model-[0-9a-f]{8}$/)
    assert.notEqual(containerName('j', 'a b'), containerName('j', 'a_b'))
  })

  it('writes env files podman reads literally, and refuses what would break them', () => {
    assert.equal(envFileText({A: 'x=y', B: ' spaced ', C: ''}), 'A=x=y\nB= spaced \nC=\n')
    for (const env of [
      {A: 'two\nlines'} as Record<string, string>,
      {A: 'cr\r'},
      {'B=C': 'x'},
      {'#A': 'x'},
      {'': 'x'},
    ]) {
      assert.throws(
        () => envFileText(env),
        (e: unknown) => isGpunetError(e) && !e.message.includes('lines') && !e.message.includes('cr\r'),
      )
    }
  })

  it('writes registry credentials as an auth file for the registry host', () => {
    const auth = (server?: string) =>
      JSON.parse(authFileText({username: 'u', password: 'p:w', ...(server ? {server} : {})})) as {
        auths: Record<string, {auth: string}>
      }
    assert.deepEqual(auth(), {auths: {'docker.io': {auth: Buffer.from('u:p:w').toString('base64')}}})
    assert.deepEqual(Object.keys(auth('https://index.docker.io/v1/').auths), ['docker.io'])
    assert.deepEqual(Object.keys(auth('ghcr.io/org').auths), ['ghcr.io'])
  })
})

describe('PodmanRuntime (real podman)', function () {
  this.timeout(60_000)
  const {dataDir} = requirePodman()
  let runtime: PodmanRuntime
  const running: RunningOperation[] = []

  before(() => (runtime = new PodmanRuntime({dataDir: dataDir(), pull: 'never', gpuAvailable: false})))
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.stop(0)))
  })

  async function start(p: OperationPlan, options: Partial<Parameters<PodmanRuntime['start']>[1]> = {}) {
    const op = await runtime.start(p, {jobId, ...options})
    running.push(op)
    return op
  }

  it('delivers env and work_dir to the container', async () => {
    const result = await runtime.run(
      plan({cmd: ['/bin/sh', '-c', 'echo "$A|$B"; pwd'], env: {A: '1', B: 'two words'}, work_dir: '/tmp'}),
      {jobId},
    )
    assert.equal(result.stdout, '1|two words\n/tmp\n', JSON.stringify(result))
    assert.equal(result.exitCode, 0)
    assert.equal(result.runtime, 'podman')
    assert.equal(result.isolated, true)
    assert.deepEqual(result.notices, [])
    assert.ok(Date.parse(result.startedAt) <= Date.parse(result.endedAt))
  })

  it('runs a string cmd with /bin/sh when the image has no bash, and with bash when it has', async () => {
    const script = 'echo "$0: $((6 * 7))"'
    const plain = await runtime.run(plan({cmd: script}), {jobId})
    assert.deepEqual([plain.stdout, plain.stderr], ['/bin/sh: 42\n', ''])
    const bash = await runtime.run(plan({cmd: script, image: TEST_IMAGE_WITH_BASH}), {jobId})
    assert.deepEqual([bash.stdout, bash.stderr], ['/bin/sh: 42\n', 'via-bash\n'])
  })

  it('passes an array cmd word by word, and runs the image default for an empty one', async () => {
    const words = await runtime.run(plan({cmd: ['/bin/echo', 'a  b', '$HOME']}), {jobId})
    assert.equal(words.stdout, 'a  b $HOME\n')
    const imageDefault = await runtime.run(plan({cmd: []}), {jobId})
    assert.equal(imageDefault.stdout, 'image default\n')
  })

  it('replaces the entrypoint with a string or an array', async () => {
    const one = await runtime.run(plan({entrypoint: '/bin/echo', cmd: ['from', 'cmd']}), {jobId})
    assert.equal(one.stdout, 'from cmd\n')
    const many = await runtime.run(plan({entrypoint: ['/bin/echo', 'ep'], cmd: []}), {jobId})
    assert.equal(many.stdout, 'ep\n')
  })

  it('reports a non-zero exit code and podman failures', async () => {
    const failed = await runtime.run(plan({cmd: 'echo "Error: mine" >&2; exit 3'}), {jobId})
    assert.deepEqual([failed.exitCode, failed.runtimeFailure], [3, undefined], "the command's own failure")
    const missing = await runtime.run(plan({image: 'localhost/gpunet-no-such-image:latest', cmd: []}), {jobId})
    assert.equal(missing.exitCode, 125)
    assert.match(missing.stderr, /gpunet-no-such-image/)
    // podman's reason, in one line, for job get to show (issue 25: a failed pull said only "exited with code 125").
    assert.equal(
      missing.runtimeFailure,
      `localhost/gpunet-no-such-image:latest: image not known (${PULL_FAILURE_HINT})`,
      'podman never pulls here (--pull never): the failure names the ways out',
    )
    // Unlike Docker, podman does not create a work_dir the image lacks (it takes it for a typo).
    const noDir = await runtime.run(plan({work_dir: '/no/such/dir', cmd: []}), {jobId})
    assert.deepEqual([noDir.exitCode, /workdir "\/no\/such\/dir" does not exist/.test(noDir.stderr)], [126, true])
    assert.match(noDir.runtimeFailure ?? '', /^workdir "\/no\/such\/dir" does not exist/)
  })

  it('captures stdout and stderr as timestamped lines, the newest kept past the cap', async () => {
    // stdout and stderr are two pipes read side by side: the pause lets stdout drain before the stderr line comes,
    // so which is newest does not depend on how busy the machine is.
    const script = 'i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done; sleep 0.5; echo err >&2'
    const result = await runtime.run(plan({cmd: script}), {jobId, logLimits: {lines: 1000, bytes: 1 << 20}})
    assert.equal(result.logs.length, 1000)
    assert.equal(result.droppedLines, 1001)
    assert.deepEqual(result.logs.at(-1), {...result.logs.at(-1), type: 'stderr', log: 'err\n'})
    assert.ok(result.stdout.startsWith('line1001\n') && result.stdout.endsWith('line1998\nline1999\n'))
    assert.equal(result.stderr, 'err\n')
    assert.ok(result.logs.every((entry) => !Number.isNaN(Date.parse(entry.timestamp))))
  })

  it('hands a substituted secret to the container, never to arguments, files or results', async () => {
    const value = `hunter2-${randomBytes(8).toString('hex')}`
    const withRefs = plan({cmd: 'sleep 1; printf %s "$TOKEN" | sha256sum | cut -c1-64; echo "$TOKEN"'})
    withRefs.env = {TOKEN: '%%secrets.TOKEN%%'}
    const op = await start(substituteSecrets(withRefs, {TOKEN: value}), {redact: {TOKEN: value}})
    const cmdline = await readFile(`/proc/${op.pid}/cmdline`, 'utf8')
    assert.ok(cmdline.includes('--env-file') && !cmdline.includes(value))
    assert.ok(!op.argv.join(' ').includes(value))
    const envFile = op.argv[op.argv.indexOf('--env-file') + 1] as string
    assert.equal(existsSync(envFile), false, 'the env file is removed once the container exists')
    const result = await op.result
    const sha = createHash('sha256').update(value).digest('hex')
    assert.equal(result.stdout, `${sha}\n%%secrets.TOKEN%%\n`)
    assert.ok(!JSON.stringify(result).includes(value))
  })

  it('gives registry credentials in an auth file that is gone once the container exists', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}`
    const op = await start(plan({cmd: ['/bin/echo', 'ok'], authentication: {docker: {username: 'u', password}}}))
    const authFile = op.argv[op.argv.indexOf('--authfile') + 1] as string
    assert.ok(authFile.endsWith('auth.json') && !op.argv.join(' ').includes(password))
    assert.equal(existsSync(authFile), false)
    const result = await op.result
    assert.deepEqual([result.exitCode, result.stdout], [0, 'ok\n'])
  })

  it('publishes an exposed port on 127.0.0.1, turns ready, and stops', async () => {
    const check = {type: 'http', method: 'GET', path: '/index.html', expected_status: 200} as const
    const op = await start(
      plan({
        cmd: 'mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 8080 -h /www',
        expose: [{port: 8080, health_checks: [check]}],
      }),
    )
    const [port] = op.ports
    assert.ok(port)
    assert.deepEqual([port.host, port.port, port.type], ['127.0.0.1', 8080, 'web'])
    const readiness = await waitUntilReady(port, {timeoutMs: 20_000, intervalMs: 100})
    assert.equal(readiness.ready, true, readiness.detail)
    assert.equal(await (await fetch(`http://127.0.0.1:${port.hostPort}/index.html`)).text(), 'ok\n')
    const result = await op.stop(5)
    assert.equal(result.stopped, true)
    assert.equal(result.exitCode, 143, 'SIGTERM reached httpd through the init process')
  })

  it('stop() ends a running container and removes it', async () => {
    const op = await start(plan({cmd: ['/bin/sleep', '60']}))
    assert.equal((await podman(dataDir(), ['container', 'exists', op.name])).code, 0)
    const started = Date.now()
    const result = await op.stop(10)
    assert.ok(Date.now() - started < 8000, 'stopped by SIGTERM, not after the grace period')
    assert.equal(result.stopped, true)
    assert.equal((await podman(dataDir(), ['container', 'exists', op.name])).code, 1)
  })

  it('runs a GPU operation without a GPU on a node that has none, and says so', async () => {
    const op = await start(plan({gpu: true, cmd: ['/bin/echo', 'cpu']}))
    assert.ok(!op.argv.includes('--device'))
    const result = await op.result
    assert.deepEqual([result.stdout, result.notices], ['cpu\n', [NO_GPU_NOTICE]])
  })

  it('refuses what it cannot run, before starting anything', async () => {
    const volume = {...plan({}), type: 'container/create-volume' as const}
    await assert.rejects(
      runtime.start(volume, {jobId}),
      (e: unknown) => isGpunetError(e) && e.code === 'operation_unsupported',
    )
    const multiline = plan({env: {KEY: 'a\nb'}})
    await assert.rejects(
      runtime.start(multiline, {jobId}),
      (e: unknown) => isGpunetError(e) && !e.message.includes('a\nb'),
    )
  })
})
