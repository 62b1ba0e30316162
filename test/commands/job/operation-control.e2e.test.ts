/**
 * `gpunet job restart` and `job stop --op` through the built CLI (issue 39): a localnet whose node runs host
 * processes, asked through its node API, signed by the poster's wallet; and each bad input.
 */
import {strict as assert} from 'node:assert'
import {existsSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {eventually} from '../../helpers/eventually.js'
import {freePort} from '../../helpers/ports.js'

interface Report {
  status: string
  resultContent: {
    status: string
    opStates: {operationId: string; status: string; logs: {type: string; log: string}[]}[]
  } | null
}

describe('gpunet job restart and job stop --op (localnet, host processes)', function () {
  this.timeout(120_000)
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  const cli = (args: string[]) => runCli(args, {env})

  before(async function () {
    if (!existsSync('/bin/busybox')) this.skip()
    box = cliSandbox()
    env = {...box.env, GPUNET_GATEWAY_PORT: '0'}
    const started = await cli(['localnet', 'start', '--detach', '--runtime', 'host', '--json'])
    assert.equal(started.code, 0, started.stderr)
  })
  after(async () => {
    await box?.cleanup()
  })

  /** The lines `op` of `job` wrote so far, as `job logs` prints them. */
  async function linesOf(job: string, op?: string): Promise<string[]> {
    const logs = await cli(['job', 'logs', job, ...(op ? ['--op', op] : [])])
    return logs.stdout.split('\n')
  }

  /** Posts a definition in the network's form; returns the job address once each of `lines` came out. */
  async function postRunning(ops: unknown[], lines: string[] = []): Promise<string> {
    const file = join(box.dir, `job-${Date.now()}.json`)
    writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops}))
    const posted = await cli(['job', 'post', '--file', file, '--timeout', '600', '--json'])
    assert.equal(posted.code, 0, posted.stderr)
    const {job} = JSON.parse(posted.stdout) as {job: string}
    const running = await cli(['job', 'get', job, '--wait', '--wait-for', 'running', '--wait-timeout', '30', '--json'])
    assert.equal(running.code, 0, running.stderr)
    // The host processes start a moment after the job shows RUNNING.
    if (lines.length > 0)
      await eventually(`the lines ${lines.join(', ')}`, 30_000, async () => {
        const out = await linesOf(job)
        return lines.every((line) => out.includes(line)) ? true : undefined
      })
    return job
  }

  it('restarts an operation, stops one, and the job goes on to its end', async () => {
    const job = await postRunning(
      [
        {
          id: 'count',
          type: 'container/run',
          args: {image: 'unused', cmd: 'echo run; sleep 30'},
          execution: {group: 'g'},
        },
        {
          id: 'side',
          type: 'container/run',
          args: {image: 'unused', cmd: 'echo side; sleep 30'},
          execution: {group: 'g'},
        },
      ],
      ['run', 'side'],
    )
    const restarted = await cli(['job', 'restart', job, '--op', 'count', '--json'])
    assert.equal(restarted.code, 0, restarted.stderr)
    assert.deepEqual(JSON.parse(restarted.stdout), {
      network: 'localnet',
      job,
      op: 'count',
      group: null,
      restarted: ['count'],
    })
    const runs = async (n: number) =>
      eventually(`run ${n} of count`, 30_000, async () =>
        (await linesOf(job, 'count')).filter((line) => line === 'run').length >= n ? true : undefined,
      )
    await runs(2)
    const stopped = await cli(['job', 'stop', job, '--op', 'side'])
    assert.equal(stopped.code, 0, stopped.stderr)
    assert.equal(stopped.stdout, `Stopped operation side of job ${job}; the job goes on\n`)
    const group = await cli(['job', 'restart', job, '--group', 'g'])
    assert.equal(group.code, 0, group.stderr)
    assert.equal(group.stdout, `Restarted operation count of job ${job}\n`)
    await runs(3)
    assert.equal((await cli(['job', 'stop', job, '--op', 'count'])).code, 0)
    const done = await cli(['job', 'get', job, '--wait', '--wait-timeout', '30', '--json'])
    const report = JSON.parse(done.stdout) as Report
    assert.equal(report.resultContent?.status, 'success', done.stdout)
    const count = report.resultContent.opStates.find((o) => o.operationId === 'count')!
    assert.deepEqual(
      count.logs.filter((l) => l.type === 'stdout').map((l) => l.log),
      ['run\n', 'run\n', 'run\n'],
    )
    assert.equal(count.status, 'stopped')
    // An ended job has nothing to restart: exit 7, as `job exec` and `job stats` say of a job not running (issue 59).
    const ended = await cli(['job', 'restart', job, '--op', 'count'])
    assert.equal(ended.code, 7, ended.stderr)
    assert.match(ended.stderr, /is already COMPLETED: no operation of it runs/)
    const stoppedOp = await cli(['job', 'stop', job, '--op', 'count', '--json'])
    assert.equal(stoppedOp.code, 7, stoppedOp.stderr)
    assert.equal((JSON.parse(stoppedOp.stdout) as {error: {code: string}}).error.code, 'job_not_running')
    // Stopping the job itself on chain is still a usage error: it is already over.
    assert.equal((await cli(['job', 'stop', job])).code, 2)
  })

  it('refuses an unknown operation or group (exit 7, named), one not running, and no target', async () => {
    const job = await postRunning(
      [
        {id: 'long', type: 'container/run', args: {image: 'unused', cmd: 'echo long; sleep 30'}},
        {id: 'later', type: 'container/run', args: {image: 'unused', cmd: 'echo later'}},
      ],
      ['long'],
    )
    const unknownOp = await cli(['job', 'restart', job, '--op', 'nope'])
    assert.equal(unknownOp.code, 7, unknownOp.stderr)
    assert.match(unknownOp.stderr, /The job has no operation nope\./)
    const unknownGroup = await cli(['job', 'restart', job, '--group', 'zz'])
    assert.equal(unknownGroup.code, 7, unknownGroup.stderr)
    assert.match(unknownGroup.stderr, /The job has no group zz\./)
    const idle = await cli(['job', 'stop', job, '--op', 'later'])
    assert.equal(idle.code, 2, idle.stderr)
    assert.match(idle.stderr, /operation later is not running \(group long runs now\)/)
    const none = await cli(['job', 'restart', job])
    assert.equal(none.code, 2, none.stderr)
    assert.match(none.stderr, /name what to restart: --op ID or --group GROUP/)
    const both = await cli(['job', 'restart', job, '--op', 'long', '--group', 'long'])
    assert.equal(both.code, 2, both.stderr)
    assert.equal((await cli(['job', 'stop', job])).code, 0)
  })

  // The node re-runs continuous checks every 30 s, as the network's nodes do: this test takes about that long.
  it('job get shows each service online, then offline once its continuous health check fails', async () => {
    const port = await freePort()
    const check = {type: 'http', method: 'GET', path: '/health', expected_status: 200, continuous: true}
    const cmd = `echo ok > health && /bin/busybox httpd -f -p 127.0.0.1:${port} -h . & sleep 4; rm health; sleep 60`
    // No line to wait for: the loop below polls until the service is seen online.
    const job = await postRunning([
      {id: 'web', type: 'container/run', args: {image: 'unused', cmd, expose: [{port, health_checks: [check]}]}},
    ])
    const seen: (boolean | undefined)[] = []
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline && !(seen.includes(true) && seen.at(-1) === false)) {
      const got = await cli(['job', 'get', job, '--json'])
      const report = JSON.parse(got.stdout) as {serviceUrls: {port: number; online?: boolean}[]}
      const online = report.serviceUrls.find((s) => s.port === port)?.online
      if (seen.at(-1) !== online) seen.push(online)
      await sleep(300)
    }
    assert.deepEqual(seen.filter((s) => s !== undefined).slice(-2), [true, false], JSON.stringify(seen))
    const text = await cli(['job', 'get', job])
    assert.match(text.stdout, /Service web:\d+ +http:\/\/\S+ {2}\(offline\)/)
    assert.equal((await cli(['job', 'stop', job])).code, 0)
  })
})
