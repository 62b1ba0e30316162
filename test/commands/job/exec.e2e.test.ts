/**
 * `gpunet job exec`, `job shell` and `job stats` end to end (issue 40): a localnet whose node runs a long job in
 * podman; commands and a terminal session run in its container through the node API's `/exec`, its figures come
 * from `/job/<job>/stats`, and what the routes refuse.
 */
import {strict as assert} from 'node:assert'
import {execFileSync, spawn} from 'node:child_process'
import {mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {Keypair} from '@solana/web3.js'
import WebSocket from 'ws'

import {EXEC_PATH} from '../../../src/lib/node-api/exec-protocol.js'
import {signHeader} from '../../../src/lib/node-api/protocol.js'
import type {TaskStat} from '../../../src/lib/node-api/stats-protocol.js'
import {readKeypair, walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {plainExec} from '../../../src/cli/fast-start.js'
import {BIN, type CliResult, runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {eventually} from '../../helpers/eventually.js'
import {requirePodman, TEST_IMAGE} from '../../helpers/podman.js'
import {hasScript} from '../../helpers/terminal.js'

/** The pseudo-terminal `script` (process `pid`) gave its command: that command's stdin. */
function terminalOf(pid: number): string {
  const [child] = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)
  return readlinkSync(`/proc/${child}/fd/0`)
}

describe('gpunet job exec on a localnet (end to end)', function () {
  this.timeout(180_000)
  requirePodman()
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  let gatewayPort: number
  let job: string
  let node: string
  /** A job that has ended (the node runs one job at a time: it runs before the long one). */
  let ended: string

  const definition = (name: string, cmd: string): string => {
    const file = join(box.dir, `${name}.json`)
    const op = {id: name, type: 'container/run', args: {image: TEST_IMAGE, cmd}}
    writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops: [op]}))
    return file
  }
  const postJob = async (file: string): Promise<string> => {
    const posted = await runCli(
      ['job', 'post', '--file', file, '--timeout', '600', '--wait-for', 'running', '--json'],
      {
        env,
      },
    )
    assert.equal(posted.code, 0, posted.stderr)
    return (JSON.parse(posted.stdout) as {job: string}).job
  }

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    env = {...box.env, GPUNET_NODE_PULL: 'never'}
    const started = await runCli(['localnet', 'start', '--detach', '--json'], {env})
    assert.equal(started.code, 0, started.stderr)
    const status = JSON.parse(started.stdout) as {gatewayUrl: string}
    gatewayPort = Number(new URL(status.gatewayUrl).port)
    const short = await runCli(['job', 'post', '--file', definition('short', 'echo done'), '--wait', '--json'], {env})
    assert.equal(short.code, 0, short.stderr)
    ended = (JSON.parse(short.stdout) as {job: string}).job
    job = await postJob(definition('main', 'echo up; sleep 600'))
    const got = await runCli(['job', 'get', job, '--json'], {env})
    node = (JSON.parse(got.stdout) as {node: string}).node
    assert.ok(node, got.stdout)
  })
  after(async () => {
    await box?.cleanup()
  })

  it("exits with the command's exit code", async () => {
    const done = await runCli(['job', 'exec', job, '--', 'sh', '-c', 'exit 7'], {env})
    assert.equal(done.code, 7, done.stderr)
    const ok = await runCli(['job', 'exec', job, '--op', 'main', '--', 'echo', 'a b', '--json'], {env})
    assert.equal(ok.code, 0, ok.stderr)
    assert.equal(ok.stdout, 'a b --json\n')
  })

  it('passes stdin through to the command, to its end', async () => {
    // Megabytes: more than one frame, and more than the pipes hold, so back-pressure is met on the way.
    const input = `${Array.from({length: 200_000}, (_, i) => `line ${i}`).join('\n')}\n`
    const done = await runCli(['job', 'exec', job, '--', 'sh', '-c', 'wc -l; echo done'], {env, stdin: input})
    assert.equal(done.code, 0, done.stderr)
    assert.match(done.stdout, /^\s*200000\ndone\n$/)
    const bytes = await runCli(['job', 'exec', job, '--', 'wc', '-c'], {env, stdin: input})
    assert.equal(Number(bytes.stdout.trim()), Buffer.byteLength(input))
  })

  it('keeps stderr on stderr and stdout on stdout', async () => {
    const done = await runCli(['job', 'exec', job, '--', 'sh', '-c', 'echo to-out; echo to-err >&2; exit 3'], {env})
    assert.equal(done.code, 3)
    assert.equal(done.stdout, 'to-out\n')
    assert.equal(done.stderr, 'to-err\n')
  })

  it("ends the command's processes in the container when the client goes", async function () {
    // rootful podman: the container's processes are in the host's /proc, with their command lines.
    const sleepers = () =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, 'utf8') === 'sleep\u00004242\u0000'
          } catch {
            return false
          }
        })
    const client = spawn(process.execPath, [BIN, 'job', 'exec', job, '--', 'sh', '-c', 'sleep 4242; echo never'], {
      env: {...process.env, ...env},
      stdio: 'ignore',
    })
    for (let i = 0; i < 100 && sleepers().length === 0; i++) await sleep(100)
    if (sleepers().length === 0) this.skip() // podman here is rootless, its processes out of sight
    client.kill('SIGKILL')
    for (let i = 0; i < 50 && sleepers().length > 0; i++) await sleep(100)
    assert.deepEqual(sleepers(), [])
  })

  it('refuses an unknown operation, a missing command, and a job that ended', async () => {
    const unknown = await runCli(['job', 'exec', job, '--op', 'nope', '--', 'true'], {env})
    assert.equal(unknown.code, 7, unknown.stderr)
    assert.match(unknown.stderr, /No operation "nope"/)
    const usage = await runCli(['job', 'exec', job], {env})
    assert.equal(usage.code, 2, usage.stderr)
    const done = await runCli(['job', 'exec', ended, '--', 'true'], {env})
    assert.equal(done.code, 7, done.stderr)
    assert.match(done.stderr, /only a running job can run commands/)
    // The node refuses it too, to a client that does not look at the chain first.
    const poster = readKeypair(env.GPUNET_WALLET!)
    const header = signHeader((m) => walletFromBytes(poster.secretKey).sign(m), {action: 'exec', node, job: ended})
    const refused = await rawExec(header, ended)
    assert.equal(refused.code, 1008)
    assert.match(refused.reason, /runs no such job/)
  })

  it('refuses a header signed for logs (read), and one signed by another wallet', async () => {
    const poster = readKeypair(env.GPUNET_WALLET!)
    const sign = (key: Keypair) => (m: Uint8Array) => walletFromBytes(key.secretKey).sign(m)
    const asRead = signHeader(sign(poster), {action: 'read', node, job})
    const asStranger = signHeader(sign(Keypair.generate()), {action: 'exec', node, job})
    const asExec = signHeader(sign(poster), {action: 'exec', node, job})
    const read = await rawExec(asRead)
    assert.equal(read.code, 3000)
    assert.match(read.reason, /signed for read, not exec/)
    assert.equal(read.output, '')
    const stranger = await rawExec(asStranger)
    assert.equal(stranger.code, 3000)
    const exec = await rawExec(asExec)
    assert.equal(exec.code, 1000, exec.reason)
    assert.equal(exec.output, 'ran\n')
    // The terminal opens only with the network's grant: an exec header there opens nothing.
    const terminal = await rawExec(asExec, job, '/terminal')
    assert.equal(terminal.code, 3000)
    assert.match(terminal.reason, /no terminal grant/)
  })

  it('job stats --json: a command burning CPU in the job raises its figure above the idle one', async () => {
    const cpu = async (): Promise<number> => {
      const shown = await runCli(['job', 'stats', job, '--json'], {env})
      assert.equal(shown.code, 0, shown.stderr)
      const [stat, more] = shown.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as TaskStat)
      assert.equal(more, undefined)
      assert.equal(stat!.opId, 'main')
      assert.equal(typeof stat!.memory.memory_usage, 'number')
      assert.equal(typeof stat!.network.received, 'number')
      return stat!.cpu.cpu_percent!
    }
    const idle = await cpu()
    assert.ok(idle < 20, `idle ${idle}`)
    // Burns until a file appears, so it ends with the test (podman leaves an orphaned exec running).
    const burner = spawn(
      process.execPath,
      [BIN, 'job', 'exec', job, '--', 'sh', '-c', 'echo burning; while [ ! -e /tmp/stop ]; do :; done'],
      {
        env: {...process.env, ...env},
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    )
    let said = ''
    burner.stdout.setEncoding('utf8').on('data', (d: string) => (said += d))
    // Listened for now: it may end before the command that stops it has returned.
    const burnerEnded = new Promise((resolve) => burner.on('close', resolve))
    try {
      // It says when it runs: the command starts a moment after its CLI does.
      await eventually('the burner running', 30_000, async () => (said.includes('burning') ? true : undefined), 50)
      const busy = await cpu()
      assert.ok(busy > 40 && busy > idle + 30, `busy ${busy}, idle ${idle}`)
      // --follow: JSON lines, one per operation every interval.
      const follower = spawn(process.execPath, [BIN, 'job', 'stats', job, '--follow', '--interval', '1'], {
        env: {...process.env, ...env},
      })
      let out = ''
      follower.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
      await eventually(
        'two lines of figures',
        30_000,
        async () => (out.split('\n').length >= 3 ? true : undefined),
        100,
      )
      const followerEnded = new Promise((resolve) => follower.on('close', resolve))
      follower.kill('SIGINT')
      const code = await followerEnded
      assert.equal(code, 130)
      for (const line of out.trim().split('\n')) assert.equal((JSON.parse(line) as TaskStat).opId, 'main')
    } finally {
      const stopped = await runCli(['job', 'exec', job, '--', 'sh', '-c', ': > /tmp/stop'], {env})
      assert.equal(stopped.code, 0, stopped.stderr)
      await burnerEnded
    }
  })

  it('job shell: a TTY session that follows the window size, and ends with Ctrl+D', async function () {
    if (!hasScript) this.skip()
    const quoted = [process.execPath, BIN, 'job', 'shell', job].map((a) => `'${a}'`).join(' ')
    // The outer terminal starts at 80×24; gpunet's session must start at that size too.
    const child = spawn('script', ['-qec', `stty cols 80 rows 24; exec ${quoted}`, '/dev/null'], {
      env: {...process.env, NO_COLOR: '1', ...env},
    })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
    const waitFor = async (pattern: RegExp) => {
      for (let i = 0; i < 300 && !pattern.test(output); i++) await sleep(50)
      assert.match(output, pattern)
    }
    try {
      await waitFor(/[#$] /)
      child.stdin.write('busybox stty size\r')
      await waitFor(/^24 80\r?$/m)
      // The outer terminal is resized, as a window is: gpunet passes the new size on.
      execFileSync('stty', ['-F', terminalOf(child.pid!), 'cols', '132', 'rows', '43'])
      // The size reaches the session a moment later (gpunet hears SIGWINCH, then tells the node): asked until it has,
      // each time once the last answer came (typed ahead of a busy shell, the echoes would break the answers' lines).
      const sizes = () => output.match(/^\d+ \d+\r?$/gm)?.length ?? 0
      await eventually(
        'the new size in the session',
        20_000,
        async () => {
          if (/^43 132\r?$/m.test(output)) return true
          const before = sizes()
          child.stdin.write('busybox stty size\r')
          for (let i = 0; i < 40 && sizes() === before; i++) await sleep(50)
          return /^43 132\r?$/m.test(output) ? true : undefined
        },
        300,
      ).catch((error: Error) => {
        throw new Error(`${error.message}; the session showed: ${JSON.stringify(output.slice(-600))}`)
      })
      child.stdin.write('\x04')
      assert.equal(await closed, 0, output)
    } finally {
      child.kill()
    }
  })

  it('job exec with a terminal on stdin ends when its command does', async function () {
    if (!hasScript) this.skip()
    const quoted = [process.execPath, BIN, 'job', 'exec', job, '--', 'echo', 'from-exec'].map((a) => `'${a}'`).join(' ')
    const child = spawn('script', ['-qec', quoted, '/dev/null'], {env: {...process.env, NO_COLOR: '1', ...env}})
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
    const code = await new Promise((resolve) => child.on('close', resolve))
    assert.equal(code, 0, output)
    assert.match(output, /from-exec/)
  })

  it('job stats on a terminal prints a table', async function () {
    if (!hasScript) this.skip()
    const quoted = [process.execPath, BIN, 'job', 'stats', job].map((a) => `'${a}'`).join(' ')
    const child = spawn('script', ['-qec', quoted, '/dev/null'], {env: {...process.env, NO_COLOR: '1', ...env}})
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
    const code = await new Promise((resolve) => child.on('close', resolve))
    assert.equal(code, 0, output)
    assert.match(output, /^OPERATION +CPU % +MEMORY +MEM % +DISK READ\/WRITE +NET IN\/OUT\r?$/m)
    assert.match(output, /^main +\d+\.\d +[\d.]+ \w?i?B \/ [\d.]+ \w?i?B/m)
  })

  it('job shell refuses a stdin that is not a terminal', async () => {
    const refused = await runCli(['job', 'shell', job], {env})
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /needs a terminal/)
  })

  describe('the plain form, answered before oclif loads (src/cli/fast-start.ts), as oclif answers it', () => {
    // oclif serves the colon form of the same command; the start-up path takes only `job exec`.
    const rows: {name: string; args: () => string[]; stdin?: string; code: number}[] = [
      {
        name: "passes the command's exit code, stdout and stderr",
        args: () => [job, '--', 'sh', '-c', 'echo out; echo err >&2; exit 7'],
        code: 7,
      },
      {name: 'passes stdin through', args: () => [job, '--', 'wc', '-c'], stdin: 'four\n', code: 0},
      {
        name: 'takes its flags before or after the job, as --name value or --name=value',
        args: () => [
          '--op=main',
          job,
          '--network',
          'localnet',
          '--wallet',
          env.GPUNET_WALLET!,
          '--',
          'echo',
          '--json',
          '-h',
        ],
        code: 0,
      },
      {name: 'an unknown job', args: () => [Keypair.generate().publicKey.toBase58(), '--', 'true'], code: 7},
      {name: 'a job that is not running', args: () => [ended, '--', 'true'], code: 7},
      {name: 'an address that is none', args: () => ['not-an-address', '--', 'true'], code: 2},
      {name: 'no wallet', args: () => [job, '--wallet', join(box.dir, 'missing.json'), '--', 'true'], code: 3},
      {name: "another wallet than the poster's", args: () => [job, '--wallet', otherWallet(), '--', 'true'], code: 6},
      {name: 'an operation the job does not run', args: () => [job, '--op', 'nope', '--', 'true'], code: 7},
      {name: 'a command the container does not have', args: () => [job, '--', 'no-such-program'], code: 127},
      // The same settings resolver on both paths: a profile and the config file too (written in before()).
      {name: 'a localnet profile, announced', args: () => [job, '--profile', 'here', '--', 'echo', 'hi'], code: 0},
      {
        name: "a profile's own RPC node (none there)",
        args: () => [job, '--profile=unreachable', '--', 'true'],
        code: 5,
      },
      {name: 'a profile that does not exist', args: () => [job, '--profile', 'nobody', '--', 'true'], code: 2},
    ]
    before(() => {
      const profiles = {here: {network: 'localnet'}, unreachable: {network: 'localnet', rpcUrl: 'http://127.0.0.1:9'}}
      mkdirSync(join(env.XDG_CONFIG_HOME!, 'gpunet'), {recursive: true})
      writeFileSync(join(env.XDG_CONFIG_HOME!, 'gpunet', 'config.json'), JSON.stringify({version: 2, profiles}))
    })
    const otherWallet = (): string => {
      const file = join(box.dir, 'other-wallet.json')
      writeFileSync(file, JSON.stringify([...Keypair.generate().secretKey]))
      return file
    }
    // When an exec fails to start, podman's service now and then adds a line of its own after runc's (its attach
    // socket closing under it): podman's race, not a difference between the two paths, so it is left out of both.
    const withoutAttachReset = (result: CliResult): CliResult => ({
      ...result,
      stderr: result.stderr.replace(/^Error: read unixpacket \S*\/attach: read: connection reset by peer\n/m, ''),
    })
    for (const row of rows) {
      it(`${row.name}: exit ${row.code}, the same stdout and stderr`, async () => {
        const args = row.args()
        const plain = plainExec(['job', 'exec', ...args], {...process.env, ...env})
        assert.ok(plain, 'the start-up path serves it')
        const fast = withoutAttachReset(await runCli(['job', 'exec', ...args], {env, stdin: row.stdin}))
        const oclif = withoutAttachReset(await runCli(['job:exec', ...args], {env, stdin: row.stdin}))
        assert.deepEqual(fast, oclif)
        assert.equal(fast.code, row.code, fast.stderr)
      })
    }

    it('leaves to oclif what it does not fully know', () => {
      const serve = (...words: string[]) => plainExec(['job', 'exec', ...words], {})
      assert.ok(serve(job, '--', 'true'))
      for (const words of [
        [job, '--help', '--', 'true'],
        [job, '--json', '--', 'true'],
        [job, '--op', 'a', '--op', 'b', '--', 'true'],
        [job, '--op', '--', 'true'],
        [job, '--op=', '--', 'true'],
        [job, '--no-such-flag', 'x', '--', 'true'],
        [job, 'second', '--', 'true'],
        [job, '--'],
        [job, 'true'],
        [job, '--network', 'devnet', '--', 'true'],
      ]) {
        assert.equal(serve(...words), undefined, words.join(' '))
      }
      // A profile is served: its network is known once the settings are resolved (exec-networks.test.ts).
      assert.ok(serve(job, '--profile', 'p', '--', 'true'))
      assert.ok(plainExec(['job', 'exec', job, '--', 'true'], {GPUNET_PROFILE: 'p'}))
      for (const env of [{GPUNET_NETWORK: 'devnet'}, {GPUNET_CONTENT_TYPE: 'json'}, {GPUNET_DEBUG: '1'}]) {
        assert.equal(plainExec(['job', 'exec', job, '--', 'true'], env), undefined, JSON.stringify(env))
      }
    })
  })

  /** Sends an `/exec` request with the given header straight to the node API; how it closed, and what it printed. */
  function rawExec(
    header: string,
    target = job,
    path = EXEC_PATH,
  ): Promise<{code: number; reason: string; output: string}> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/`, {
        headers: {host: `${node}.node.localhost:${gatewayPort}`},
      })
      let output = ''
      ws.on('open', () => ws.send(JSON.stringify({path, header, body: {jobAddress: target, cmd: ['echo', 'ran']}})))
      ws.on('message', (data, binary) => {
        if (binary) output += (data as Buffer).subarray(1).toString()
      })
      ws.on('close', (code, reason) => resolve({code, reason: reason.toString(), output}))
      ws.on('error', reject)
    })
  }
})
