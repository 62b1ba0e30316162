/**
 * `gpunet job logs --follow` end to end (issue 20): a localnet whose node runs a job printing a numbered line every
 * 100 ms, read through a TCP relay the test cuts mid-stream to force a reconnect.
 */
import {strict as assert} from 'node:assert'
import {spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {createServer, type Server, type Socket, connect} from 'node:net'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {BIN, runCli, runPipeline} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {requirePodman, TEST_IMAGE} from '../../helpers/podman.js'

interface Line {
  op: string | null
  stream: string | null
  time: string
  line: string
}

/** A TCP relay to 127.0.0.1:`target` whose open connections the test can cut. */
async function relay(target: number): Promise<{port: number; cut(): number; close(): Promise<void>}> {
  const open = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1')
    client.pipe(upstream).pipe(client)
    const pair = [client, upstream]
    for (const s of pair) {
      open.add(s)
      s.on('error', () => pair.forEach((p) => p.destroy()))
      s.on('close', () => {
        open.delete(s)
        pair.forEach((p) => p.destroy())
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      const count = open.size
      for (const s of open) s.destroy()
      return count
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

describe('gpunet job logs --follow on a localnet (end to end)', function () {
  this.timeout(120_000)
  requirePodman()
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  let gatewayPort: number

  const definition = (name: string, cmd: string): string => {
    const file = join(box.dir, `${name}.json`)
    const op = {id: name, type: 'container/run', args: {image: TEST_IMAGE, cmd}}
    writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops: [op]}))
    return file
  }
  const postJob = async (file: string): Promise<string> => {
    const posted = await runCli(['job', 'post', '--file', file, '--timeout', '600', '--json'], {env})
    assert.equal(posted.code, 0, posted.stderr)
    return (JSON.parse(posted.stdout) as {job: string}).job
  }

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    env = {...box.env, GPUNET_NODE_PULL: 'never'}
    const started = await runCli(['localnet', 'start', '--detach', '--json'], {env})
    assert.equal(started.code, 0, started.stderr)
    gatewayPort = Number(new URL((JSON.parse(started.stdout) as {gatewayUrl: string}).gatewayUrl).port)
  })
  after(async () => {
    await box?.cleanup()
  })

  it('sees the early lines while the job runs, none repeated or lost across a forced reconnect, exit 0', async () => {
    const count = 40
    const job = await postJob(
      definition('count', `i=0; while [ $i -lt ${count} ]; do i=$((i+1)); echo line $i; sleep 0.1; done`),
    )
    const cutter = await relay(gatewayPort)
    const child = spawn(process.execPath, [BIN, 'job', 'logs', job, '--follow', '--json'], {
      env: {...process.env, NO_COLOR: '1', ...env, GPUNET_NODE_API_URL: `http://{node}.node.localhost:${cutter.port}`},
    })
    const lines: Line[] = []
    const seenAt = new Map<string, number>()
    let stderr = ''
    let buffered = ''
    let cuts = 0
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffered += d
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        const line = JSON.parse(buffered.slice(0, nl)) as Line
        buffered = buffered.slice(nl + 1)
        lines.push(line)
        seenAt.set(line.line, Date.now())
        // Mid-stream, the relay drops every connection: the client must reconnect and resume.
        if (line.line === 'line 12') cuts = cutter.cut()
      }
    })
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    await cutter.close()
    assert.equal(code, 0, stderr)
    assert.ok(cuts > 0, 'the relay cut a live connection')
    assert.match(stderr, /Lost the node API/)
    assert.deepEqual(
      lines.map((l) => l.line),
      Array.from({length: count}, (_, i) => `line ${i + 1}`),
    )
    for (const line of lines) {
      assert.equal(line.op, 'count')
      assert.equal(line.stream, 'stdout')
      assert.ok(!Number.isNaN(Date.parse(line.time)))
    }
    // The early lines came while the job ran: line 5 long before the last line was printed in the container.
    const lastPrinted = Date.parse(lines.at(-1)!.time)
    assert.ok(seenAt.get('line 5')! < lastPrinted - 2000, 'line 5 was on stdout while the job still ran')
  })

  it('exits 8 for a job that fails, with its lines, and prints an ended job from its result', async () => {
    const job = await postJob(definition('fails', 'echo before the failure; sleep 1; echo on stderr >&2; exit 3'))
    const followed = await runCli(['job', 'logs', job, '--follow'], {env})
    assert.equal(followed.code, 8, followed.stderr)
    // The job's stderr goes to stderr, its stdout alone to stdout.
    assert.equal(followed.stdout, 'before the failure\n')
    assert.match(followed.stderr, /^on stderr$/m)
    // The error says the exit code once: "failed: Operation fails exited with code 3.", not "(exit code 3)" too.
    const said = followed.stderr.split('\n').filter((l) => l.startsWith('[node]') && /exited with code 3/.test(l))
    assert.equal(said.length, 1, `the node says the exit once: ${followed.stderr}`)
    const errorLine = followed.stderr.split('\n').find((l) => l.startsWith('Error: '))!
    assert.match(errorLine, /^Error: job \w+ failed: Operation fails exited with code 3\. \[operation_failed\]$/)
    // kubectl's --timestamps and --tail N, on the ended job's lines.
    const stamped = await runCli(['job', 'logs', job, '--timestamps'], {env})
    assert.match(stamped.stdout, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z before the failure\n$/)
    assert.match(stamped.stderr, /^\d{4}-\d\d-\d\dT[\d:.]+Z on stderr$/m)
    const last = await runCli(['job', 'logs', job, '--tail', '1'], {env})
    assert.equal(last.code, 8)
    assert.equal(last.stdout, '', 'the last line is the stderr one')
    assert.match(last.stderr, /^on stderr$/m)
    const lastJson = await runCli(['job', 'logs', job, '--tail', '1', '--json'], {env})
    assert.deepEqual(
      lastJson.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as {line?: string}).line ?? 'error'),
      ['on stderr', 'error'],
    )
    const ended = await runCli(['job', 'logs', job, '--json'], {env})
    assert.equal(ended.code, 8)
    const [first, second, error] = ended.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    assert.deepEqual(
      [first!.line, first!.stream, second!.line, second!.stream],
      ['before the failure', 'stdout', 'on stderr', 'stderr'],
    )
    assert.equal((error!.error as {code: string}).code, 'job_failed')
  })

  it('--op and --since filter, and a bad --since is a usage error', async () => {
    const job = await postJob(definition('quick', 'echo only line'))
    const done = await runCli(['job', 'logs', job, '--follow', '--op', 'quick'], {env})
    assert.equal(done.code, 0, done.stderr)
    assert.equal(done.stdout, 'only line\n')
    assert.equal((await runCli(['job', 'logs', job, '--op', 'other'], {env})).stdout, '')
    assert.equal((await runCli(['job', 'logs', job, '--since', '2099-01-01T00:00:00Z'], {env})).stdout, '')
    const bad = await runCli(['job', 'logs', job, '--since', 'yesterday'], {env})
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /--since "yesterday"/)
  })

  it('job post --wait shows the lines on stderr as they come, stdout keeps the JSON report', async () => {
    const posted = await runCli(
      ['job', 'post', '--file', definition('waited', 'echo first; sleep 1; echo second'), '--wait', '--json'],
      {env},
    )
    assert.equal(posted.code, 0, posted.stderr)
    assert.match(posted.stderr, /\[waited\] first\n[^]*\[waited\] second\n/)
    assert.equal((JSON.parse(posted.stdout) as {outcome: string}).outcome, 'succeeded')
    const quiet = await runCli(
      ['job', 'post', '--file', definition('quiet', 'echo hush'), '--wait', '--no-logs', '--json'],
      {env},
    )
    assert.equal(quiet.code, 0, quiet.stderr)
    assert.doesNotMatch(quiet.stderr, /\[quiet\]/)
  })

  describe('stops once its reader is gone (issue 44)', () => {
    /** Runs a shell pipeline under pipefail: its exit code is gpunet's unless gpunet exited 0. */
    const pipeline = (script: string) => runPipeline(script, env)
    const statusOf = async (job: string) =>
      (JSON.parse((await runCli(['job', 'get', job, '--json'], {env})).stdout) as {status: string}).status

    it('`job logs --follow | head -1` returns quietly (exit 0) while the job is still RUNNING', async () => {
      const job = await postJob(definition('ticks', 'i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done'))
      try {
        const piped = await pipeline(`gpunet job logs ${job} --follow | head -1`)
        assert.equal(piped.code, 0, piped.stderr)
        assert.equal(piped.stdout, 'tick 1\n')
        // Issue 59: within 2 s of head, not once the node's socket gave up its closing handshake (30 s).
        assert.ok(piped.lingeredMs < 2000, `gpunet went on ${piped.lingeredMs} ms after head`)
        assert.doesNotMatch(piped.stderr, /Error|EPIPE|at /)
        assert.equal(await statusOf(job), 'RUNNING')
        // --wait's live lines go to stderr: the same when that is the stream whose reader left.
        const waited = await pipeline(`gpunet job get ${job} --wait --wait-for done 2>&1 >/dev/null | head -2`)
        assert.equal(waited.code, 0, waited.stdout)
        assert.equal(waited.stdout.split('\n').length, 3, waited.stdout)
        assert.equal(await statusOf(job), 'RUNNING')
        // --tail 2 --follow: the last two lines there were, then the new ones, in order and none twice.
        const tailed = await pipeline(`gpunet job logs ${job} --follow --tail 2 | head -4`)
        assert.equal(tailed.code, 0, tailed.stderr)
        const ticks = tailed.stdout
          .trim()
          .split('\n')
          .map((l) => Number(/^tick (\d+)$/.exec(l)![1]))
        assert.ok(ticks[0]! > 2, `not from the first line: ${tailed.stdout}`)
        assert.deepEqual(ticks, [ticks[0]!, ticks[0]! + 1, ticks[0]! + 2, ticks[0]! + 3])
      } finally {
        await runCli(['job', 'stop', job], {env})
      }
    })

    it('`job logs --follow | head -1` of a job that then prints nothing returns within 2 s of head (issue 59)', async () => {
      // No later line finds the pipe closed: gpunet must see the reader leave all the same.
      const job = await postJob(definition('hush', 'echo only line; while true; do sleep 1; done'))
      try {
        const piped = await pipeline(`gpunet job logs ${job} --follow | head -1`)
        assert.equal(piped.code, 0, piped.stderr)
        assert.equal(piped.stdout, 'only line\n')
        assert.ok(piped.lingeredMs < 2000, `gpunet went on ${piped.lingeredMs} ms after head`)
        assert.equal(await statusOf(job), 'RUNNING')
      } finally {
        await runCli(['job', 'stop', job], {env})
      }
    })
  })
})
