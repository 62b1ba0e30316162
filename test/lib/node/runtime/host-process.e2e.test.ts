import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {type AddressInfo, createServer} from 'node:net'

import type {OperationArgs} from '../../../../src/lib/definition/schema.js'
import {isGpunetError} from '../../../../src/lib/errors.js'
import {waitUntilReady} from '../../../../src/lib/node/health.js'
import {type OperationPlan, planOperations} from '../../../../src/lib/node/operation-plan.js'
import {
  HOST_PROCESS_NOTICE,
  HOST_RESOURCES_NOTICE,
  HostProcessRuntime,
  UNCONTAINED_NOTICE,
} from '../../../../src/lib/node/runtime/host-process.js'
import {freePort} from '../../../../src/lib/node/runtime/process.js'
import type {RunningOperation} from '../../../../src/lib/node/runtime/runtime.js'
import {eventually} from '../../../helpers/eventually.js'

function plan(args: Partial<OperationArgs>): OperationPlan {
  const ops = [{id: 'op', type: 'container/run' as const, args: {image: 'ignored', ...args}}]
  return planOperations({version: '0.1', type: 'container', ops})[0] as OperationPlan
}

const jobId = 'host-test'

describe('HostProcessRuntime', function () {
  this.timeout(20_000)
  const runtime = new HostProcessRuntime({allowHostProcesses: true})
  const running: RunningOperation[] = []
  afterEach(() => Promise.all(running.splice(0).map((r) => r.stop(0))))

  it('exists only when the user turns it on', () => {
    assert.throws(
      () => new HostProcessRuntime({allowHostProcesses: false}),
      (e: unknown) => isGpunetError(e) && e.code === 'host_process_not_allowed',
    )
  })

  it('names the folders of resources in GPUNET_RESOURCES, since their targets are not remapped', async () => {
    const mounts = [{source: '/tmp/gpunet-res-x/0', target: '/data'}]
    const result = await runtime.run(plan({cmd: 'echo "$GPUNET_RESOURCES"'}), {jobId, mounts})
    assert.deepEqual(JSON.parse(result.stdout), {'/data': '/tmp/gpunet-res-x/0'})
    assert.ok(result.notices.includes(HOST_RESOURCES_NOTICE), JSON.stringify(result.notices))
  })

  it('runs the command on the host and says so in the result', async () => {
    const result = await runtime.run(
      plan({cmd: 'echo "$GREETING"; pwd; echo oops >&2; exit 4', env: {GREETING: 'hi'}}),
      {
        jobId,
      },
    )
    const [greeting, cwd] = result.stdout.split('\n')
    assert.equal(greeting, 'hi')
    assert.match(cwd ?? '', /gpunet-host-/)
    assert.equal(existsSync(cwd ?? ''), false, 'its temporary folder is removed')
    assert.deepEqual(
      [result.exitCode, result.stderr, result.runtime, result.isolated],
      [4, 'oops\n', 'host-process', false],
    )
    assert.deepEqual(result.notices, [HOST_PROCESS_NOTICE])
  })

  it('lists the settings a host process cannot apply', async () => {
    const result = await runtime.run(plan({cmd: ['true'], work_dir: '/app', gpu: true}), {jobId})
    assert.deepEqual(result.notices, [HOST_PROCESS_NOTICE, 'Not applied on the host: work_dir, gpu.'])
  })

  it("runs entrypoint then cmd, without the node's own environment", async () => {
    process.env.GPUNET_NODE_ONLY = 'node secret'
    try {
      const result = await runtime.run(plan({entrypoint: ['/bin/sh', '-c'], cmd: ['echo "[$GPUNET_NODE_ONLY]"']}), {
        jobId,
      })
      assert.equal(result.stdout, '[]\n')
    } finally {
      delete process.env.GPUNET_NODE_ONLY
    }
  })

  it('passes env values in the environment, not in arguments, and masks them in output', async () => {
    const value = 'host-secret-value'
    const op = await runtime.start(plan({cmd: 'sleep 0.5; echo "$TOKEN"', env: {TOKEN: value}}), {
      jobId,
      redact: {TOKEN: value},
    })
    running.push(op)
    const cmdline = await readFile(`/proc/${op.pid}/cmdline`, 'utf8')
    assert.ok(!cmdline.includes(value) && !op.argv.join(' ').includes(value))
    const result = await op.result
    assert.equal(result.stdout, '%%secrets.TOKEN%%\n')
  })

  it('keeps the newest lines past the cap, and counts the ones dropped', async () => {
    const result = await runtime.run(plan({cmd: ['seq', '1', '10000']}), {
      jobId,
      logLimits: {lines: 100, bytes: 1 << 20},
    })
    assert.equal(result.logs.length, 100)
    assert.deepEqual([result.logs[0]!.log, result.logs.at(-1)!.log], ['9901\n', '10000\n'])
    assert.equal(result.droppedLines, 9900)
    assert.ok(result.stdout.startsWith('9901\n') && result.stdout.endsWith('9999\n10000\n'))
  })

  it('serves an exposed port on the port the process listens on, and stop() ends the whole command', async () => {
    const port = await freePort()
    const server = `require('http').createServer((q, s) => s.end('up')).listen(${port}, '127.0.0.1')`
    const check = {type: 'http', method: 'GET', path: '/', expected_status: 200} as const
    const op = await runtime.start(
      plan({cmd: `"${process.execPath}" -e "${server}"; echo never`, expose: [{port, health_checks: [check]}]}),
      {jobId},
    )
    running.push(op)
    assert.deepEqual(
      op.ports.map((p) => [p.host, p.hostPort]),
      [['127.0.0.1', port]],
    )
    const readiness = await waitUntilReady(op.ports[0] as (typeof op.ports)[0], {timeoutMs: 10_000, intervalMs: 50})
    assert.equal(readiness.ready, true, readiness.detail)
    const result = await op.stop(5)
    assert.equal(result.stopped, true)
    assert.ok(!result.stdout.includes('never'))
    assert.equal((await waitUntilReady(op.ports[0] as (typeof op.ports)[0], {timeoutMs: 0})).ready, false)
  })

  it('refuses an operation that only its image knows how to run', async () => {
    await assert.rejects(
      runtime.start(plan({cmd: []}), {jobId}),
      (e: unknown) => isGpunetError(e) && e.code === 'operation_unsupported',
    )
  })

  // Processes are found by their command line: inside the operation's PID namespace `$!` is not a host pid.
  it('ends what the command left behind, setsid children included, when the operation ends', async () => {
    const result = await runtime.run(plan({cmd: 'setsid sleep 301 > /dev/null 2>&1 & sleep 302 & echo started'}), {
      jobId,
    })
    assert.equal(result.exitCode, 0)
    assert.equal(result.stdout.trim(), 'started')
    assert.deepEqual(await leftRunning(['sleep', '301'], ['sleep', '302']), [])
  })

  it('ends a process that left the session and dropped the marker (env -u GPUNET_OPERATION setsid)', async () => {
    const result = await runtime.run(
      plan({cmd: 'env -u GPUNET_OPERATION setsid -f sleep 303 > /dev/null 2>&1; sleep 1; echo started'}),
      {jobId},
    )
    assert.equal(result.stdout.trim(), 'started')
    if (result.notices.includes(UNCONTAINED_NOTICE)) {
      // No PID namespace on this host: the result must say the process may outlive the operation.
      for (const pid of await leftRunning(['sleep', '303'])) process.kill(pid, 'SIGKILL')
      return
    }
    assert.deepEqual(await leftRunning(['sleep', '303']), [])
  })

  it('stop() ends setsid children too', async () => {
    let said = false
    const op = await runtime.start(plan({cmd: 'setsid sleep 304 & echo started; wait'}), {
      jobId,
      onLine: () => (said = true),
    })
    running.push(op)
    await eventually(
      'the line and the setsid child',
      10_000,
      async () => (said && processesRunning(['sleep', '304']).length > 0 ? true : undefined),
      20,
    )
    const result = await op.stop(1)
    assert.equal(result.stdout.trim(), 'started')
    assert.deepEqual(await leftRunning(['sleep', '304']), [])
  })

  it('fails an operation whose exposed port another program holds, instead of serving that program', async () => {
    const other = createServer().listen(0, '127.0.0.1')
    await once(other, 'listening')
    const {port} = other.address() as AddressInfo
    try {
      const result = await runtime.run(plan({cmd: 'echo never', expose: port}), {jobId})
      assert.equal(result.exitCode, 127)
      assert.match(result.stderr, new RegExp(`Port ${port} is already in use on the node host`))
      assert.equal(result.stdout, '', 'the command did not run')
      assert.ok(result.notices.includes(HOST_PROCESS_NOTICE))
    } finally {
      other.close()
    }
  })

  it('validates env names as the podman runtime does, and reports it in the result', async () => {
    const result = await runtime.run(plan({cmd: 'echo never', env: {'BAD NAME': 'x'}}), {jobId})
    assert.equal(result.exitCode, 127)
    assert.match(result.stderr, /Environment variable name "BAD NAME" is not valid/)
    assert.ok(result.notices.includes(HOST_PROCESS_NOTICE))
  })

  it('reports a command the system cannot start (E2BIG) in the result, with the host-process notice', async () => {
    // One env value over the kernel's limit for a single string (128 KiB).
    const result = await runtime.run(plan({cmd: 'echo never', env: {HUGE: 'x'.repeat(300_000)}}), {jobId})
    assert.equal(result.exitCode, 127)
    assert.match(result.stderr, /could not be started: E2BIG/)
    assert.ok(result.notices.includes(HOST_PROCESS_NOTICE))
  })
})

/** Host pids of live processes running one of `commands` (argv prefixes), once they had 5 s to end. */
async function leftRunning(...commands: string[][]): Promise<number[]> {
  const find = () => processesRunning(...commands)
  for (let waited = 0; waited < 5000 && find().length > 0; waited += 50) await new Promise((r) => setTimeout(r, 50))
  return find()
}

/** Host pids of live processes running one of `commands` (argv prefixes). */
function processesRunning(...commands: string[][]): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
        return alive(pid) && commands.some((c) => c.every((part, i) => argv[i] === part))
      } catch {
        return false
      }
    })
}

function alive(pid: number): boolean {
  try {
    // A zombie has ended: only its parent has not read its status yet.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}
