/**
 * What a node's API sends cannot crash or fool the client (issue 43): a stand-in node API on 127.0.0.1 that sends
 * bad frames (a timestamp past what a Date holds, an entry nested 20,000 deep, text that is no JSON), terminal
 * escape sequences, and more lines than a reader that does not read can take.
 */
import {strict as assert} from 'node:assert'
import {spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {Keypair, type PublicKey} from '@solana/web3.js'
import {type WebSocket, WebSocketServer} from 'ws'

import {BIN, runCli} from '../../helpers/cli.js'
import {type CliSandbox, useCliSandbox} from '../../helpers/cli-localnet.js'
import {putJobAccount, putRunAccount, seedNetwork} from '../../helpers/standin-network.js'
import {
  cidDigest,
  ipfsCid,
  startStandinPinning,
  startStandinRpc,
  type StandinPinning,
  type StandinRpc,
} from '../../helpers/standin.js'
import {describeAtTerminal, hasControls, runInTerminal} from '../../helpers/terminal.js'

/** A stand-in node API: each connection gets `frames` (raw text), then `after` runs. */
interface StandinNode {
  url: string
  connections: number
  close(): Promise<void>
}

async function startNode(onRequest: (ws: WebSocket) => void): Promise<StandinNode> {
  const server: Server = createServer()
  const wss = new WebSocketServer({server})
  const node: StandinNode = {
    url: '',
    connections: 0,
    close: async () => {
      for (const client of wss.clients) client.terminate()
      await new Promise((resolve) => server.close(resolve))
    },
  }
  wss.on('connection', (ws) => {
    node.connections++
    ws.once('message', () => onRequest(ws))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  node.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return node
}

/** A `/flog` frame as the network's nodes send it, its entry's JSON text inside the JSON. */
const flog = (entry: object): string => JSON.stringify({path: 'flog', data: JSON.stringify(entry)})
/** A frame whose entry's message nests `levels` arrays deep (written as text: no stack is used to build it). */
const deepFlog = (levels: number, timestamp: number): string => {
  const entry = `{"opId":"op1","group":"g","type":"container","timestamp":${timestamp},"message":{"type":"x","payload":${'['.repeat(levels)}${']'.repeat(levels)}}}`
  return JSON.stringify({path: 'flog', data: entry})
}

describe('job logs against a hostile node API (stand-in devnet)', function () {
  this.timeout(60_000)
  const box: CliSandbox = useCliSandbox()
  let rpc: StandinRpc
  let pinning: StandinPinning
  let wallet: Keypair
  let cid: string
  let nodeApi: StandinNode | null = null
  const args = (...rest: string[]) => [...rest, '--network', 'devnet', '--rpc', rpc.url]

  beforeEach(async () => {
    rpc = await startStandinRpc()
    pinning = await startStandinPinning('jwt')
    wallet = Keypair.generate()
    writeFileSync(box.env.GPUNET_WALLET!, JSON.stringify([...wallet.secretKey]))
    seedNetwork(rpc, 'devnet', wallet.publicKey)
    const definition = new TextEncoder().encode('{"version":"0.1","type":"container","ops":[]}')
    cid = await ipfsCid(definition)
    pinning.content.set(cid, definition)
  })
  afterEach(async () => {
    await nodeApi?.close()
    nodeApi = null
    await rpc.close()
    await pinning.close()
  })

  /** A RUNNING job of the wallet's on a fresh node. */
  function runningJob(): PublicKey {
    const job = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {ipfsJob: cidDigest(cid), timeout: 600n, state: 0, payer: wallet.publicKey})
    putRunAccount(rpc, 'devnet', job, Keypair.generate().publicKey, wallet.publicKey, Math.floor(Date.now() / 1000))
    return job
  }

  /** Records a success result for `job` holding `lines`: the job is done. */
  async function finish(job: PublicKey, lines: string[], opId = 'op1'): Promise<void> {
    const now = Date.now()
    const result = {
      status: 'success',
      startTime: now - 5000,
      endTime: now,
      opStates: [
        {
          operationId: opId,
          group: 'g',
          providerId: 'docker',
          status: 'success',
          startTime: now - 5000,
          endTime: now,
          exitCode: 0,
          logs: lines.map((log) => ({type: 'stdout', log: `${log}\n`, timestamp: now})),
          diagnostics: {reason: {hostShutDown: false, jobStopped: false, jobExpired: false}},
        },
      ],
    }
    const bytes = new TextEncoder().encode(JSON.stringify(result))
    const resultCid = await ipfsCid(bytes)
    pinning.content.set(resultCid, bytes)
    putJobAccount(rpc, 'devnet', job, {
      ipfsJob: cidDigest(cid),
      timeout: 600n,
      state: 2,
      ipfsResult: cidDigest(resultCid),
      payer: wallet.publicKey,
    })
  }

  const line = (message: string, timestamp: number, extra: object = {}) =>
    flog({opId: 'op1', group: 'g', type: 'container', timestamp, message, ...extra})

  it('skips a frame with a timestamp of 1e20, one nested 20,000 deep and one that is no JSON, with a notice, and goes on', async () => {
    const job = runningJob()
    const t = Date.now()
    nodeApi = await startNode((ws) => {
      ws.send(line('before', t))
      ws.send(line('too late', 1e20))
      ws.send(deepFlog(20_000, t + 1))
      ws.send('not json {')
      ws.send(JSON.stringify({path: 'flog', data: '{"opId": "op1", "timestamp": '}))
      ws.send(JSON.stringify({path: 'flog', data: 'null'}))
      ws.send(line('a string for a time', 'soon' as unknown as number))
      ws.send(line('after', t + 2))
      setTimeout(() => void finish(job, ['before', 'after']), 300)
    })
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url, GPUNET_NODE_API_URL: nodeApi.url}
    const out = await runCli(args('job', 'logs', job.toBase58(), '--follow'), {env})
    assert.equal(out.code, 0, out.stderr)
    assert.equal(out.stdout, 'before\nafter\n')
    assert.match(out.stderr, /Skipped a frame from the node: its timestamp 100000000000000000000 is not a time/)
    assert.match(out.stderr, /Skipped 6 frames from the node in all/)
    assert.doesNotMatch(out.stderr, /RangeError|Maximum call stack|at .*\.js:\d+/)
  })

  it('--wait goes on through bad frames: the live lines before and after them show', async () => {
    const job = runningJob()
    const t = Date.now()
    nodeApi = await startNode((ws) => {
      ws.send(line('first', t))
      ws.send(line('bad', 1e20))
      ws.send(deepFlog(20_000, t + 1))
      ws.send(line('second', t + 2))
      setTimeout(() => void finish(job, ['first', 'second']), 500)
    })
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url, GPUNET_NODE_API_URL: nodeApi.url}
    const out = await runCli(args('job', 'get', job.toBase58(), '--wait', '--logs', '--json'), {env})
    assert.equal(out.code, 0, out.stderr)
    assert.match(out.stderr, /\[op1\] first\n[\s\S]*\[op1\] second\n/)
    assert.match(out.stderr, /Skipped a frame from the node: its timestamp 100000000000000000000 is not a time/)
    assert.doesNotMatch(out.stderr, /could not be read/, 'the sink of the live lines takes every good frame')
    assert.equal((JSON.parse(out.stdout) as {outcome: string}).outcome, 'succeeded')
  })

  it('--json keeps the bytes of each line exact, escape sequences and all', async () => {
    const job = runningJob()
    const t = Date.now()
    const hostile = '\x1b]0;owned\x07\x1b[2K\x1b[32m✔ all good\x1b[0m\r'
    nodeApi = await startNode((ws) => {
      ws.send(line(hostile, t))
      setTimeout(() => void finish(job, ['x']), 300)
    })
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url, GPUNET_NODE_API_URL: nodeApi.url}
    const out = await runCli(args('job', 'logs', job.toBase58(), '--follow', '--json'), {env})
    assert.equal(out.code, 0, out.stderr)
    assert.equal((JSON.parse(out.stdout.split('\n')[0]!) as {line: string}).line, hostile)
  })

  it('pauses the node socket while stdout is full: a reader that does not read holds the node back', async () => {
    const job = runningJob()
    const frame = line('x'.repeat(256 * 1024), Date.now())
    let sent = 0
    let stalledSince = 0
    let stalled: () => void = () => {}
    const stall = new Promise<void>((resolve) => (stalled = resolve))
    nodeApi = await startNode((ws) => {
      // The node sends whenever the socket takes more: as fast as the client reads.
      const pump = () => {
        if (ws.readyState !== ws.OPEN) return
        if (ws.bufferedAmount < 1024 * 1024 && sent < 400 * 1024 * 1024) {
          stalledSince = 0
          ws.send(frame)
          sent += frame.length
          return void setImmediate(pump)
        }
        stalledSince ||= Date.now()
        if (Date.now() - stalledSince >= 1500) stalled()
        setTimeout(pump, 10)
      }
      pump()
    })
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url, GPUNET_NODE_API_URL: nodeApi.url}
    const child = spawn(process.execPath, [BIN, ...args('job', 'logs', job.toBase58(), '--follow')], {env})
    // Never read: the pipe fills and the CLI's stdout says it is full.
    child.stdout.pause()
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    try {
      const verdict = await Promise.race([
        stall.then(() => 'stalled'),
        new Promise<string>((resolve) => setTimeout(() => resolve('never stalled'), 20_000)),
      ])
      assert.equal(verdict, 'stalled', `the node could send ${sent} bytes without pause; ${stderr}`)
      assert.ok(sent < 64 * 1024 * 1024, `the client took ${sent} bytes it could not write`)
    } finally {
      child.kill('SIGKILL')
    }
  })
})

describeAtTerminal('job logs at a terminal: remote escape sequences are stripped', function () {
  this.timeout(60_000)
  const box: CliSandbox = useCliSandbox()
  let rpc: StandinRpc
  let pinning: StandinPinning
  let nodeApi: StandinNode | null = null

  beforeEach(async () => {
    rpc = await startStandinRpc()
    pinning = await startStandinPinning('jwt')
  })
  afterEach(async () => {
    await nodeApi?.close()
    await rpc.close()
    await pinning.close()
  })

  it('strips CSI, OSC and C0/C1 controls from lines, [node] notices and close reasons; keeps tabs', async () => {
    const wallet = Keypair.generate()
    writeFileSync(box.env.GPUNET_WALLET!, JSON.stringify([...wallet.secretKey]))
    seedNetwork(rpc, 'devnet', wallet.publicKey)
    const definition = new TextEncoder().encode('{"version":"0.1","type":"container","ops":[]}')
    const cid = await ipfsCid(definition)
    pinning.content.set(cid, definition)
    const job = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {ipfsJob: cidDigest(cid), timeout: 600n, state: 0, payer: wallet.publicKey})
    putRunAccount(rpc, 'devnet', job, Keypair.generate().publicKey, wallet.publicKey, Math.floor(Date.now() / 1000))
    const t = Date.now()
    nodeApi = await startNode((ws) => {
      const entry = (type: string, message: string, timestamp: number) =>
        ws.send(flog({opId: 'op1', group: 'g', type, timestamp, message}))
      entry('container', '\x1b]0;owned title\x07a\tline\x1b[2K', t)
      entry('container', '\x1b]52;c;cm0gLXJmIH4=\x1b\\copied\x9b31mred\x07\x08', t + 1)
      entry('info', 'pulling \x1b[32m✔ done\x1b[0m\x1bc', t + 2)
      setTimeout(() => ws.close(4000, 'bye \x1b]0;x\x07'), 200)
      // The job ends only once the CLI has its logs: on a loaded machine the CLI can take longer than any fixed
      // delay to start, and a job already COMPLETED without a result has no logs to follow.
      setTimeout(() => {
        putJobAccount(rpc, 'devnet', job, {ipfsJob: cidDigest(cid), timeout: 600n, state: 2, payer: wallet.publicKey})
      }, 700)
    })
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url, GPUNET_NODE_API_URL: nodeApi.url}
    const out = await runInTerminal(
      ['job', 'logs', job.toBase58(), '--follow', '--network', 'devnet', '--rpc', rpc.url],
      env,
    )
    assert.match(out.output, /a\tline/)
    assert.match(out.output, /copiedred/)
    assert.match(out.output, /\[node\] pulling ✔ done/)
    // The pseudo-terminal turns \n into \r\n; nothing else of C0, C1 or ESC reaches it.
    assert.equal(hasControls(out.output), false, JSON.stringify(out.output))
  })
})
