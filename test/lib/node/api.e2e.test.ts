/**
 * The localnet node's API (issue 20), read by a client written from reference/network-job-plane.md §4 with `ws`
 * and the network's own SDK for headers (@nosana/sdk's AuthorizationManager), not with gpunet's client code.
 */
import {strict as assert} from 'node:assert'
import {request} from 'node:http'

import {AuthorizationManager} from '@nosana/sdk'
import {Keypair, type PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'
import WebSocket from 'ws'

import type {FlowState} from '../../../src/lib/results/flow-state.js'
import {clientMessage, signHeader} from '../../../src/lib/node-api/protocol.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {post, result, waitFor} from '../../helpers/node.js'
import {requirePodman, TEST_IMAGE} from '../../helpers/podman.js'

/** Prints `line N` every 100 ms, N = 1..count. */
const counting = (count: number) => ({
  id: 'count',
  type: 'container/run',
  args: {image: TEST_IMAGE, cmd: `i=0; while [ $i -lt ${count} ]; do i=$((i+1)); echo line $i; sleep 0.1; done`},
})

interface Frame {
  path: string
  data: Record<string, unknown>
}

describe('the localnet node API (podman)', function () {
  this.timeout(120_000)
  requirePodman()
  const t = useLocalnet({node: {gatewayPort: 0, pull: 'never', gpus: 0}})
  const node = () => (t.ln.runtime.node as {address: string}).address
  const port = () => Number(new URL(t.ln.runtime.gatewayUrl!).port)
  /** The network CLI's header: `Hello Nosana Node!` signed by the poster, no time part. */
  const networkHeader = (options: {signer?: Keypair; includeTime?: boolean} = {}) =>
    new AuthorizationManager([...(options.signer ?? t.wallet).secretKey]).generate('Hello Nosana Node!', {
      includeTime: options.includeTime ?? false,
    })

  /** gpunet's header for `action` on the job, signed by its poster. */
  const ours = (action: 'read' | 'stop' = 'read') =>
    signHeader((m) => walletFromBytes(t.wallet.secretKey).sign(m), {action, node: node(), job: job.toBase58()})

  /** Opens the WebSocket at the node's name, sends one request, collects frames until `until` or the close. */
  function socket(
    message: unknown,
    until: (frames: Frame[]) => boolean = () => false,
  ): Promise<{frames: Frame[]; code: number; reason: string}> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port()}/`, {headers: {host: `${node()}.node.localhost:${port()}`}})
      const frames: Frame[] = []
      ws.on('open', () => ws.send(typeof message === 'string' ? message : JSON.stringify(message)))
      ws.on('message', (raw) => {
        const frame = JSON.parse(raw.toString()) as {path: string; data: string}
        frames.push({path: frame.path, data: JSON.parse(frame.data) as Record<string, unknown>})
        if (until(frames)) ws.close(1000)
      })
      ws.on('error', reject)
      ws.on('close', (code, reason) => resolve({frames, code, reason: reason.toString()}))
    })
  }

  /** A REST call at the node's name. */
  function rest(method: string, path: string, header?: string): Promise<{status: number; body: string}> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {host: `${node()}.node.localhost:${port()}`}
      if (header) headers.authorization = header
      const req = request({host: '127.0.0.1', port: port(), method, path, headers}, (res) => {
        let body = ''
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString()
          // The info stream stays open while the job runs: its first event is enough.
          if (res.headers['content-type']?.startsWith('text/event-stream') && body.includes('\n\n')) res.destroy()
        })
        res.on('close', () => resolve({status: res.statusCode ?? 0, body}))
      })
      req.on('error', reject)
      req.end()
    })
  }

  const body = (job: PublicKey, extra: Record<string, unknown> = {}) => ({
    jobAddress: job.toBase58(),
    address: t.wallet.publicKey.toBase58(),
    ...extra,
  })
  const lines = (frames: Frame[]) =>
    frames.filter((f) => f.data.type === 'container').map((f) => f.data.message as string)

  let job: PublicKey
  before(async function () {
    job = await post(t, [counting(60)])
    await waitFor(t, job, 'RUNNING')
  })

  it('/flog: history first, then live, in order, numbered and with strictly increasing timestamps', async () => {
    // So the socket under test has history to replay: a line is out before it opens.
    await socket({path: '/flog', header: ours(), body: body(job)}, (f) => lines(f).length > 0)
    const {frames} = await socket({path: '/flog', header: ours(), body: body(job)}, (f) => lines(f).includes('line 15'))
    assert.ok(frames.every((f) => f.path === 'flog'))
    const container = frames.filter((f) => f.data.type === 'container')
    assert.deepEqual(
      lines(frames),
      Array.from({length: 15}, (_, i) => `line ${i + 1}`),
    )
    for (const f of container) assert.equal(f.data.opId, 'count')
    const stamps = frames.map((f) => f.data.timestamp as number)
    assert.ok(
      stamps.every((s, i) => i === 0 || s > stamps[i - 1]!),
      'timestamps strictly increase',
    )
    const seqs = frames.map((f) => f.data.seq as number)
    assert.ok(
      seqs.every((s, i) => i === 0 || s > seqs[i - 1]!),
      'seq increases',
    )
    assert.ok(
      frames.some((f) => f.data.opId === 'system' && f.data.type === 'info'),
      'the node says what it does',
    )
    assert.equal(container[0]!.data.stream, 'stdout')
  })

  it('/log gives the container lines as type "log"; /status gives the states; opId filters /flog', async () => {
    const log = await socket({path: '/log', header: await networkHeader({includeTime: true}), body: body(job)}, (f) =>
      f.some((x) => x.data.log === 'line 3\n'),
    )
    assert.ok(log.frames.every((f) => f.path === 'log'))
    const logged = log.frames.filter((f) => f.data.type === 'log').map((f) => f.data.log)
    // Each line keeps its newline, as the network's nodes send it.
    assert.deepEqual(
      logged,
      logged.map((_, i) => `line ${i + 1}\n`),
    )
    const status = await socket({path: '/status', header: ours(), body: body(job)}, (f) => f.length >= 2)
    assert.ok(status.frames.every((f) => f.path === 'state'))
    assert.equal(status.frames[0]!.data.status, 'running')
    assert.equal((status.frames[0]!.data.state as {job: string}).job, job.toBase58())
    const only = await socket({path: '/flog', header: ours(), body: body(job, {opId: 'count'})}, (f) =>
      lines(f).includes('line 2'),
    )
    assert.ok(
      only.frames.every((f) => f.data.opId === 'count'),
      'no system lines with opId: count',
    )
  }).timeout(20_000)

  it('refuses a wrong key, no signature, a signature over another message and expired headers: close 3000', async () => {
    const good = await networkHeader()
    const [message, signature] = good.split(':') as [string, string]
    const wallet = walletFromBytes(t.wallet.secretKey)
    const old = Date.now() - 301_000
    const staleMessage = clientMessage('read', node(), job.toBase58(), old)
    const headers: Record<string, unknown> = {
      'another key': await networkHeader({signer: Keypair.generate()}),
      'no signature': message,
      'no header': undefined,
      'signature over another message': `Hello Another Node!:${signature}`,
      'time part older than 300 s': `${message}:${signature}:${Date.now() - 301_000}`,
      'gpunet message older than 300 s': `${staleMessage}:${bs58.encode(wallet.sign(Buffer.from(staleMessage)))}`,
      'gpunet message for another job': signHeader((m) => wallet.sign(m), {
        action: 'read',
        node: node(),
        job: Keypair.generate().publicKey.toBase58(),
      }),
    }
    for (const path of ['/flog', '/log']) {
      for (const [what, header] of Object.entries(headers)) {
        const answer = await socket({path, header, body: body(job)})
        assert.equal(answer.code, 3000, `${path}, ${what}: closed ${answer.code} ${answer.reason}`)
        assert.equal(answer.frames.length, 0, `${path}, ${what}: no frame`)
      }
    }
    const fresh = ours()
    const accepted = await socket({path: '/flog', header: fresh, body: body(job)}, (f) => f.length > 0)
    assert.equal(accepted.code, 1000)
  }).timeout(30_000)

  it('answers bad requests with the network close codes', async () => {
    const header = await networkHeader()
    assert.equal((await socket({path: '/nope', header, body: body(job)})).code, 3003)
    assert.equal((await socket({path: '/flog', header, body: {}})).code, 1007)
    assert.equal((await socket('not json at all')).code, 1007)
  })

  it('REST: info (server-sent events), endpoints, results, then a stop the network way (its expiry brought forward)', async () => {
    const header = ours()
    assert.equal((await rest('GET', `/job/${job.toBase58()}/info`)).status, 401)
    assert.equal((await rest('GET', `/job/${job.toBase58()}/info`, await networkHeader())).status, 401)
    const info = await rest('GET', `/job/${job.toBase58()}/info`, header)
    assert.equal(info.status, 200)
    const event = JSON.parse(info.body.replace(/^data: /, '').trim()) as {
      status: string
      opStates: {operationId: string}[]
    }
    assert.equal(event.status, 'running')
    assert.equal(event.opStates[0]!.operationId, 'count')
    assert.equal((await rest('GET', `/job/${job.toBase58()}/endpoints`, header)).status, 400)
    assert.equal((await rest('GET', `/job/${job.toBase58()}/results`, header)).status, 400)
    assert.equal((await rest('GET', `/`)).body, JSON.stringify(node()))
    // A header signed for reading stops nothing; the network CLI's lasting header does, as on the network.
    assert.equal((await rest('POST', `/job/${job.toBase58()}/stop`, header)).status, 401)
    const stopped = await rest('POST', `/job/${job.toBase58()}/stop`, await networkHeader())
    assert.equal(stopped.status, 200, stopped.body)
    await waitFor(t, job, 'COMPLETED')
    // As the network's nodes record it: the stop brings the expiry forward, so the job reads as one that ran its time.
    const {doc, text} = await result(t, job)
    assert.equal(doc.status, 'success')
    const [op] = (JSON.parse(text) as FlowState).opStates
    assert.equal(op!.status, 'success')
    assert.deepEqual(op!.diagnostics.reason, {
      hostShutDown: false,
      jobStopped: false,
      jobExpired: true,
      reason: 'Operation stopped due to flow expired',
    })
    assert.match(doc.ops[0]!.stdout, /^line 1\nline 2\n/)
    const results = await rest('GET', `/job/${job.toBase58()}/results`, header)
    assert.equal(results.status, 200)
    assert.equal((JSON.parse(results.body) as {status: string}).status, 'success')
  }).timeout(30_000)
})
