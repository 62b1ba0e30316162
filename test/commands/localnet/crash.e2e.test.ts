/**
 * A localnet killed with SIGKILL (issue 61): the next start on its data directory works at once and stops the
 * containers the dead one left running (nothing else owned them), and only its own: a container of another
 * localnet, labelled with that one's data directory, keeps running.
 */
import {strict as assert} from 'node:assert'
import {execFile} from 'node:child_process'
import {readdirSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {promisify} from 'node:util'

import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {ownerTag, writePodmanConfig} from '../../../src/lib/node/runtime/podman.js'
import {isAlive} from '../../../src/lib/process/alive.js'
import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {requirePodman, TEST_IMAGE} from '../../helpers/podman.js'

const run = promisify(execFile)

describe('gpunet localnet start after a crash', function () {
  this.timeout(180_000)
  const podmanDir = requirePodman().dataDir
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  let podmanEnv: NodeJS.ProcessEnv
  let other = ''
  const cli = (args: string[]) => runCli(args, {env})
  const podman = async (args: string[]) => (await run('podman', args, {env: podmanEnv})).stdout.trim()
  const running = async (label: string) => (await podman(['ps', '-q', '--filter', `label=${label}`])).split('\n')
  /** The processes whose command line holds `text`. */
  const processes = (text: string) =>
    readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)
        } catch {
          return false
        }
      })

  before(async () => {
    box = cliSandbox()
    env = {...box.env, GPUNET_NODE_PULL: 'never', GPUNET_NODE_RUNTIME: 'podman'}
    podmanEnv = {...process.env, ...(await writePodmanConfig(podmanDir()))}
  })
  after(async () => {
    // Without gpunet's configuration: requirePodman's own `after` has removed it by now.
    if (other) await run('podman', ['rm', '-f', '-t', '0', other]).catch(() => undefined)
    await box?.cleanup()
  })

  it("starts at once, and stops the dead localnet's containers but not another localnet's", async () => {
    const started = await cli(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const {pid} = JSON.parse(started.stdout) as LocalnetStatus
    const posted = await cli(['job', 'run', '--image', TEST_IMAGE, '--timeout', '600', '--json', '--', 'sleep', '1000'])
    assert.equal(posted.code, 0, posted.stderr)
    const {job} = JSON.parse(posted.stdout) as {job: string}
    const deadline = Date.now() + 30_000
    while ((await running(`gpunet.job=${job}`)).join('') === '') {
      assert.ok(Date.now() < deadline, "the job's container never ran")
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    // An exec starts podman's API service, on a socket named after the localnet.
    const exec = await cli(['job', 'exec', job, '--', 'echo', 'hi'])
    assert.equal(exec.stdout, 'hi\n', exec.stderr)
    const service = `unix://${join(tmpdir(), `gpunet-podman-api-${ownerTag(resolve(box.dataDir))}-`)}`
    assert.equal(processes(service).length, 1, "no podman API service on the localnet's socket")
    // Another localnet's container, as its node labels them.
    other = await podman([
      'run',
      '-d',
      '--rm',
      '--label',
      'gpunet.job=another',
      '--label',
      `gpunet.localnet=${join(box.dir, 'elsewhere')}`,
      TEST_IMAGE,
      'sleep',
      '1000',
    ])

    process.kill(pid!, 'SIGKILL')
    while (isAlive(pid!)) await new Promise((resolve) => setTimeout(resolve, 50))
    const began = Date.now()
    const again = await cli(['localnet', 'start', '--detach', '--json'])
    assert.equal(again.code, 0, again.stderr)
    assert.ok(Date.now() - began < 20_000, `the start took ${Date.now() - began} ms`)
    assert.deepEqual(await running(`gpunet.job=${job}`), [''], "the dead localnet's container still runs")
    assert.deepEqual(processes(service), [], "the dead localnet's podman API service still runs")
    const log = readFileSync(join(box.dataDir, 'localnet.log'), 'utf8')
    const said = /Stopped 1 container and podman's API service a crashed localnet of .* left running/
    assert.match(log, said)
    // Said by `start --detach` too, whose user does not read the log.
    assert.match(again.stderr, said)
    assert.deepEqual(await running('gpunet.job=another'), [other.slice(0, 12)])
  })

  it("with --runtime host: the next start kills the dead localnet's host processes", async () => {
    const hostBox = cliSandbox()
    const hostEnv = {...hostBox.env, GPUNET_NODE_RUNTIME: 'host'}
    // A length no other process sleeps for, to find this one in /proc.
    const seconds = `${1000 + Math.floor(Math.random() * 1000)}.5`
    const sleepers = () =>
      readdirSync('/proc')
        .filter((pid) => /^\d+$/.test(pid))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${seconds}\0`
          } catch {
            return false
          }
        })
    try {
      const started = await runCli(['localnet', 'start', '--detach', '--json'], {env: hostEnv})
      assert.equal(started.code, 0, started.stderr)
      const {pid} = JSON.parse(started.stdout) as LocalnetStatus
      const args = ['job', 'run', '--image', TEST_IMAGE, '--timeout', '600', '--json', '--', 'sleep', seconds]
      const posted = await runCli(args, {env: hostEnv})
      assert.equal(posted.code, 0, posted.stderr)
      const deadline = Date.now() + 30_000
      while (sleepers().length === 0) {
        assert.ok(Date.now() < deadline, "the job's process never ran")
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      process.kill(pid!, 'SIGKILL')
      while (isAlive(pid!)) await new Promise((resolve) => setTimeout(resolve, 50))
      const again = await runCli(['localnet', 'start', '--detach', '--json'], {env: hostEnv})
      assert.equal(again.code, 0, again.stderr)
      await new Promise((resolve) => setTimeout(resolve, 500))
      assert.deepEqual(sleepers(), [], "the dead localnet's host process still runs")
      assert.match(readFileSync(join(hostBox.dataDir, 'localnet.log'), 'utf8'), /Stopped \d+ host process/)
    } finally {
      for (const pid of sleepers()) process.kill(Number(pid), 'SIGKILL')
      await hostBox.cleanup()
    }
  })
})
