/**
 * The node's client of podman's API (src/lib/node/runtime/podman-api.ts). podman is a remote party like any other:
 * a stand-in `podman` executable serves the API on the socket it is given and sends what podman never would
 * (frames of no stream, a frame announcing 4 GiB, an answer of 200 KB, a service that dies at start). Then, with the
 * real podman, the service's life: started on the first exec, started again once it ended, stopped by close().
 */
import {strict as assert} from 'node:assert'
import {execFileSync} from 'node:child_process'
import {chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {PodmanApi} from '../../../src/lib/node/runtime/podman-api.js'
import {writePodmanConfig} from '../../../src/lib/node/runtime/podman.js'
import {podman, requirePodman, TEST_IMAGE} from '../../helpers/podman.js'

/** A stand-in for `podman system service --time=N unix://PATH`: behaves as FAKE_MODE says. */
const FAKE_PODMAN = `#!/usr/bin/env node
const http = require('node:http')
const fs = require('node:fs')
const mode = process.env.FAKE_MODE
fs.appendFileSync(process.env.FAKE_STARTS, 'start\\n')
if (mode === 'dies') { process.stderr.write('Error: the storage is locked\\n'); process.exit(125) }
const socketPath = process.argv[process.argv.length - 1].replace('unix://', '')
const ID = 'a'.repeat(64)
const frame = (stream, text) => {
  const body = Buffer.from(text)
  const head = Buffer.alloc(8)
  head[0] = stream
  head.writeUInt32BE(body.length, 4)
  return Buffer.concat([head, body])
}
const server = http.createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    if (req.url === '/_ping') return res.end('OK')
    if (req.url.endsWith('/exec') && mode === 'big-json') return res.end(JSON.stringify({Id: ID, pad: 'x'.repeat(200000)}))
    if (req.url.endsWith('/exec')) { res.statusCode = 201; return res.end(JSON.stringify({Id: ID})) }
    if (req.url.endsWith('/json')) {
      // As podman does once idle: gone after the session, its end recorded.
      return res.end(JSON.stringify({Running: false, ExitCode: 3}), () => mode === 'one-session' && process.exit(0))
    }
    res.statusCode = 404
    res.end('{}')
  })
})
server.on('upgrade', (req, socket) => {
  socket.write('HTTP/1.1 101 UPGRADED\\r\\nConnection: Upgrade\\r\\nUpgrade: tcp\\r\\n\\r\\n')
  if (mode === 'huge-frame') {
    const head = Buffer.alloc(8)
    head[0] = 1
    head.writeUInt32BE(0xffffffff, 4)
    socket.write(head)
    return
  }
  if (mode === 'bad-stream') return void socket.write(frame(9, 'what'))
  // Frames cut anywhere, header included: one byte at a time.
  const all = Buffer.concat([frame(1, 'hello '), frame(2, 'oops'), frame(1, 'world')])
  let i = 0
  const next = () => (i < all.length ? socket.write(all.subarray(i, ++i), () => setImmediate(next)) : socket.end())
  next()
})
server.listen(socketPath)
`

describe('podman API client: what a podman service may send', function () {
  this.timeout(30_000)
  let dir: string
  let fake: string
  let starts: string
  const apis: PodmanApi[] = []

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gpunet-podman-api-test-'))
    fake = join(dir, 'podman')
    starts = join(dir, 'starts')
    writeFileSync(fake, FAKE_PODMAN)
    chmodSync(fake, 0o755)
  })
  after(async () => {
    for (const api of apis) await api.close()
    rmSync(dir, {recursive: true, force: true})
  })

  const api = (mode: string) => {
    writeFileSync(starts, '')
    const made = new PodmanApi(fake, () => ({...process.env, FAKE_MODE: mode, FAKE_STARTS: starts}))
    apis.push(made)
    return made
  }
  /** Runs one exec to its end: its output by stream and how it ended. */
  const run = (made: PodmanApi) =>
    new Promise<{stdout: string; stderr: string; code?: number; error?: string}>((resolve) => {
      const {child} = made.exec('c', ['true'], [], {tty: false})
      let stdout = ''
      let stderr = ''
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
      child.stdin!.end()
      child.on('close', (code: number) => resolve({stdout, stderr, code}))
      child.on('error', (error: Error) => resolve({stdout, stderr, error: error.message}))
    })

  it('splits frames cut anywhere into stdout and stderr, and ends with the exit code podman recorded', async () => {
    assert.deepEqual(await run(api('ok')), {stdout: 'hello world', stderr: 'oops', code: 3})
  })

  it('ends a session whose frame announces 4 GiB, without waiting for it', async () => {
    const result = await run(api('huge-frame'))
    assert.equal(result.error, 'podman sent output the exec protocol does not have')
    assert.equal(result.stdout, '')
  })

  it('ends a session with a frame of no stream podman has', async () => {
    assert.equal((await run(api('bad-stream'))).error, 'podman sent output the exec protocol does not have')
  })

  it('refuses an answer far larger than podman sends', async () => {
    assert.match((await run(api('big-json'))).error ?? '', /with more than 65536 bytes/)
  })

  it("says why the service did not start, in podman's words", async () => {
    const made = api('dies')
    assert.equal((await run(made)).error, 'podman system service did not start: Error: the storage is locked')
    // Not kept as started: the next exec tries again.
    await run(made)
    assert.equal(readFileSync(starts, 'utf8'), 'start\nstart\n')
  })

  it('starts the service again once it has ended (its idle timeout)', async () => {
    const made = api('one-session')
    assert.equal((await run(made)).code, 3)
    // The stand-in exits when its session closes, as podman does when idle; wait until the client has seen it.
    for (let i = 0; i < 100 && readFileSync(starts, 'utf8') === 'start\n'; i++) {
      const again = await run(made)
      if (again.code === 3) break
      await new Promise((r) => setTimeout(r, 50))
    }
    assert.equal(readFileSync(starts, 'utf8'), 'start\nstart\n')
  })
})

describe('podman API client: the service with podman itself', function () {
  this.timeout(120_000)
  const podmanTest = requirePodman()
  const name = `gpunet-api-test-${process.pid}`

  before(async () => {
    const started = await podman(podmanTest.dataDir(), ['run', '-d', '--name', name, TEST_IMAGE, 'sleep', '300'])
    assert.equal(started.code, 0)
  })
  after(() => podman(podmanTest.dataDir(), ['rm', '-f', '-t', '0', name]))

  const services = () => {
    try {
      return execFileSync('pgrep', ['-f', `^podman system service --time=60 unix://${tmpdir()}/gpunet-podman-api-`], {
        encoding: 'utf8',
      })
        .trim()
        .split('\n')
        .filter(Boolean)
    } catch {
      return []
    }
  }

  it('starts on the first exec, serves the next ones, and ends with close()', async () => {
    const env = {...process.env, ...(await writePodmanConfig(podmanTest.dataDir()))}
    const before = services()
    const api = new PodmanApi('podman', () => env)
    const exec = (cmd: string[]) =>
      new Promise<{out: string; code: number}>((resolve, reject) => {
        const {child} = api.exec(name, cmd, ['X=from-env'], {tty: false})
        let out = ''
        child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
        // 'close' comes once all output is read, as a child process's does.
        child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
        child.stdin!.end('piped\n')
        child.on('close', (code: number) => resolve({out, code}))
        child.on('error', reject)
      })
    assert.deepEqual(await exec(['sh', '-c', 'cat; echo "$X"; exit 4']), {out: 'piped\nfrom-env\n', code: 4})
    const running = services().filter((pid) => !before.includes(pid))
    assert.equal(running.length, 1)
    assert.deepEqual(await exec(['sh', '-c', 'cat']), {out: 'piped\n', code: 0})
    assert.deepEqual(
      services().filter((pid) => !before.includes(pid)),
      running,
      'one service for both',
    )
    await api.close()
    assert.deepEqual(
      services().filter((pid) => !before.includes(pid)),
      [],
    )
  })
})
