/**
 * `job logs` and `job list` on devnet through stand-ins on 127.0.0.1 (issue 20): a JSON-RPC node laid out as the
 * deployed program, a node API that behaves as the network's (frames without numbers, replayed from the start on
 * every connection, headers checked with the network's SDK), and an indexer with its rate limit.
 */
import {strict as assert} from 'node:assert'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

import {AuthorizationManager} from '@nosana/sdk'
import {Keypair, type PublicKey} from '@solana/web3.js'
import {writeFileSync} from 'node:fs'
import {WebSocketServer} from 'ws'

import {runCli} from '../../helpers/cli.js'
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

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('job logs and job list on devnet (stand-in RPC, node API and indexer)', function () {
  this.timeout(60_000)
  const box: CliSandbox = useCliSandbox()
  let rpc: StandinRpc
  let pinning: StandinPinning
  let wallet: Keypair
  let cid: string
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
    await rpc.close()
    await pinning.close()
  })

  /** Records a success result for `job`, done: as its node's `finish` would leave it. */
  async function finish(job: PublicKey, lines: string[]): Promise<void> {
    const result = {
      status: 'success',
      startTime: Date.now() - 5000,
      endTime: Date.now(),
      opStates: [
        {
          operationId: 'op1',
          group: 'g',
          providerId: 'docker',
          status: 'success',
          startTime: Date.now() - 5000,
          endTime: Date.now(),
          exitCode: 0,
          logs: lines.map((log) => ({type: 'stdout', log: `${log}\n`, timestamp: Date.now()})),
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

  it("job logs --follow reads the node API as the network's nodes serve it, dropping what a reconnect replays", async () => {
    const job = Keypair.generate().publicKey
    const node = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {ipfsJob: cidDigest(cid), timeout: 600n, state: 0, payer: wallet.publicKey})
    putRunAccount(rpc, 'devnet', job, node, wallet.publicKey, Math.floor(Date.now() / 1000))
    // The network's node: TaskLog entries with strictly increasing timestamps, history first on every connection.
    const history: {opId: string; group: string; type: string; timestamp: number; message: string}[] = []
    let stamp = Date.now()
    const add = (message: string) =>
      history.push({opId: 'op1', group: 'g', type: 'container', timestamp: ++stamp, message})
    const requests: {path: string; body: {jobAddress: string}; valid: boolean}[] = []
    const server = createServer()
    const wss = new WebSocketServer({server})
    let connections = 0
    wss.on('connection', (ws) => {
      connections++
      const mine = connections
      ws.on('message', (raw) => {
        const request = JSON.parse(raw.toString()) as {path: string; header: string; body: {jobAddress: string}}
        const valid = new AuthorizationManager([...Keypair.generate().secretKey]).validate(request.header, {
          publicKey: wallet.publicKey,
        })
        requests.push({path: request.path, body: request.body, valid})
        for (const entry of history) ws.send(JSON.stringify({path: 'flog', data: JSON.stringify(entry)}))
        let next = history.length
        const timer = setInterval(() => {
          next++
          add(`line ${next}`)
          ws.send(JSON.stringify({path: 'flog', data: JSON.stringify(history.at(-1))}))
          // The first connection breaks after line 6 (no close frame); the second runs to line 10.
          if (mine === 1 && next === 6) {
            clearInterval(timer)
            ws.terminate()
          }
          if (next === 10) {
            clearInterval(timer)
            void finish(
              job,
              history.map((h) => h.message),
            )
          }
        }, 50)
        ws.on('close', () => clearInterval(timer))
      })
    })
    add('line 1')
    add('line 2')
    const url = await listen(server)
    try {
      const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url, GPUNET_NODE_API_URL: url}
      const out = await runCli(args('job', 'logs', job.toBase58(), '--follow'), {env})
      assert.equal(out.code, 0, out.stderr)
      assert.equal(out.stdout, Array.from({length: 10}, (_, i) => `line ${i + 1}\n`).join(''))
      assert.ok(connections >= 2, 'it reconnected')
      assert.deepEqual(
        requests.map((r) => [r.path, r.body.jobAddress, r.valid]),
        requests.map(() => ['/flog', job.toBase58(), true]),
        "every request signed by the poster, as the network's SDK checks it",
      )
    } finally {
      for (const client of wss.clients) client.terminate()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it("job logs --follow falls back to /log, whose lines end with their newline as the network's nodes send them", async () => {
    const job = Keypair.generate().publicKey
    const node = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {ipfsJob: cidDigest(cid), timeout: 600n, state: 0, payer: wallet.publicKey})
    putRunAccount(rpc, 'devnet', job, node, wallet.publicKey, Math.floor(Date.now() / 1000))
    const server = createServer()
    const wss = new WebSocketServer({server})
    let stamp = Date.now()
    // Whole lines with their newline (as nodes send them), one without (an older node), one that is a blank line.
    const logs = ['first line\n', 'second line\r\n', 'no newline', '\n']
    wss.on('connection', (ws) => {
      ws.on('message', (raw) => {
        const request = JSON.parse(raw.toString()) as {path: string}
        // An older node: no /flog.
        if (request.path === '/flog') return ws.close(3003, 'Unknown path')
        for (const log of logs) {
          const entry = {log, method: 'NodeRepository.displayLog', type: 'log', timestamp: ++stamp}
          ws.send(JSON.stringify({path: 'log', data: JSON.stringify(entry)}))
        }
        // A progress entry whose log is an object, as a node's image pull sends them.
        const pull = {log: {status: 'pulling', layer: 'abc'}, method: 'Provider.pull', type: 'info', timestamp: ++stamp}
        ws.send(JSON.stringify({path: 'log', data: JSON.stringify(pull)}))
        setTimeout(() => void finish(job, ['first line', 'second line', 'no newline', '']), 300)
      })
    })
    const url = await listen(server)
    try {
      const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url, GPUNET_NODE_API_URL: url}
      const out = await runCli(args('job', 'logs', job.toBase58(), '--follow'), {env})
      assert.equal(out.code, 0, out.stderr)
      assert.equal(out.stdout, 'first line\nsecond line\nno newline\n\n')
      assert.match(out.stderr, /^\[node\] \{"status":"pulling","layer":"abc"\}$/m)
    } finally {
      for (const client of wss.clients) client.terminate()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('job logs: a QUEUED job without --follow is exit 7; an ended one prints from its result', async () => {
    const job = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {ipfsJob: cidDigest(cid), timeout: 600n, state: 0, payer: wallet.publicKey})
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url}
    const queued = await runCli(args('job', 'logs', job.toBase58(), '--json'), {env})
    assert.equal(queued.code, 7)
    assert.equal((JSON.parse(queued.stdout) as {error: {code: string}}).error.code, 'job_queued')
    await finish(job, ['from the result'])
    const ended = await runCli(args('job', 'logs', job.toBase58()), {env})
    assert.equal(ended.code, 0, ended.stderr)
    assert.equal(ended.stdout, 'from the result\n')
  })

  it("job logs: another wallet than the poster is exit 6 before connecting; a node's 3000 close is exit 6", async () => {
    const job = Keypair.generate().publicKey
    const node = Keypair.generate().publicKey
    const poster = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {ipfsJob: cidDigest(cid), timeout: 600n, state: 0, payer: poster})
    putRunAccount(rpc, 'devnet', job, node, poster, Math.floor(Date.now() / 1000))
    const server = createServer()
    const wss = new WebSocketServer({server})
    let connections = 0
    wss.on('connection', (ws) => {
      connections++
      ws.on('message', () => ws.close(3000, 'Unauthorized Request'))
    })
    const url = await listen(server)
    try {
      const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url, GPUNET_NODE_API_URL: url}
      const other = await runCli(args('job', 'logs', job.toBase58(), '--json'), {env})
      assert.equal(other.code, 6)
      const error = (JSON.parse(other.stdout) as {error: {code: string; message: string}}).error
      assert.equal(error.code, 'not_poster')
      assert.equal(error.message, `only the poster of job ${job.toBase58()} may read its live logs from its node`)
      assert.equal(connections, 0, 'nothing was sent to the node')
      // The wallet's own job, which the node refuses all the same.
      const mine = Keypair.generate().publicKey
      putJobAccount(rpc, 'devnet', mine, {ipfsJob: cidDigest(cid), timeout: 600n, state: 0, payer: wallet.publicKey})
      putRunAccount(rpc, 'devnet', mine, node, wallet.publicKey, Math.floor(Date.now() / 1000))
      const refused = await runCli(args('job', 'logs', mine.toBase58(), '--follow'), {env})
      assert.equal(refused.code, 6)
      assert.match(
        refused.stderr,
        new RegExp(`Error: the node API refused to stream job ${mine.toBase58()}: Unauthorized Request`),
      )
    } finally {
      for (const client of wss.clients) client.terminate()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  /** A stand-in indexer: `answer` decides each response; every query is recorded. */
  async function indexer(answer: (query: URLSearchParams, res: ServerResponse) => void) {
    const queries: URLSearchParams[] = []
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x')
      assert.equal(url.pathname, '/jobs/')
      queries.push(url.searchParams)
      answer(url.searchParams, res)
    })
    return {url: await listen(server), queries, close: () => new Promise((r) => server.close(r))}
  }

  it("job list asks the network's indexer for the wallet's jobs, with the filters and page", async () => {
    const node = Keypair.generate().publicKey.toBase58()
    const market = Keypair.generate().publicKey.toBase58()
    const job = (address: string, state: number, timeStart: number, timeEnd: number) => ({
      address,
      state,
      market,
      node,
      price: 10,
      timeout: 600,
      timeStart,
      timeEnd,
      ipfsJob: cid,
      ipfsResult: null,
      payer: wallet.publicKey.toBase58(),
      project: wallet.publicKey.toBase58(),
    })
    const stand = await indexer((_q, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(
        JSON.stringify({
          jobs: [job('JobA', 2, 1_700_000_000, 1_700_000_100), job('JobB', 1, 1_700_000_000, 0)],
          totalJobs: 7,
        }),
      )
    })
    try {
      const env = {...box.env, GPUNET_INDEXER_URL: stand.url}
      const out = await runCli(
        args(
          'job',
          'list',
          '--state',
          'COMPLETED',
          '--market',
          market,
          '--node',
          node,
          '--limit',
          '2',
          '--offset',
          '2',
          '--json',
        ),
        {env},
      )
      assert.equal(out.code, 0, out.stderr)
      const query = Object.fromEntries(stand.queries[0]!)
      assert.deepEqual(query, {
        poster: wallet.publicKey.toBase58(),
        limit: '2',
        offset: '2',
        state: 'COMPLETED',
        market,
        node,
      })
      const listed = JSON.parse(out.stdout) as {
        total: number
        source: string
        jobs: {job: string; state: string; outcome: string | null; durationSeconds: number; cost: {baseUnits: string}}[]
      }
      assert.equal(listed.total, 7)
      assert.equal(listed.source, 'indexer')
      assert.deepEqual(
        listed.jobs.map((j) => [j.job, j.state, j.outcome]),
        [
          ['JobA', 'COMPLETED', 'stopped'],
          ['JobB', 'RUNNING', null],
        ],
      )
      assert.equal(listed.jobs[0]!.durationSeconds, 100)
      assert.equal(listed.jobs[0]!.cost.baseUnits, '1000')
      const table = await runCli(args('job', 'list'), {env})
      assert.match(table.stdout, /^ADDRESS +STATE +OUTCOME +MARKET +START +DURATION +COST\nJobA +COMPLETED +stopped /)
      assert.match(table.stderr, /More: --offset 2/)
    } finally {
      await stand.close()
    }
  })

  it('job list: an indexer that fails or answers no list is exit 5, naming it, with --source chain as the hint', async () => {
    let answer = 500
    const stand = await indexer((_q, res) => {
      res.writeHead(answer, {'content-type': 'application/json'})
      res.end(answer === 200 ? '{"nope": 1}' : 'broken')
    })
    try {
      const env = {...box.env, GPUNET_INDEXER_URL: stand.url}
      for (const [status, why] of [
        [500, 'it answered 500'],
        [200, 'its answer has no jobs list'],
      ] as const) {
        answer = status
        const out = await runCli(args('job', 'list', '--json'), {env})
        assert.equal(out.code, 5)
        const error = (JSON.parse(out.stdout) as {error: {code: string; message: string; hint: string}}).error
        assert.equal(error.code, 'indexer_unavailable')
        assert.equal(error.message, `could not list jobs from the indexer at ${stand.url}: ${why}`)
        assert.match(error.hint, /--source chain/)
      }
    } finally {
      await stand.close()
    }
  })

  it("job list honours the indexer's 429 (Retry-After), and says so with exit 5 when it holds", async () => {
    let refusals = 1
    const stand = await indexer((_q, res) => {
      if (refusals-- > 0) {
        res.writeHead(429, {'retry-after': '1'})
        return res.end('slow down')
      }
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify({jobs: [], totalJobs: 0}))
    })
    try {
      const env = {...box.env, GPUNET_INDEXER_URL: stand.url}
      const started = Date.now()
      const waited = await runCli(args('job', 'list', '--json'), {env})
      assert.equal(waited.code, 0, waited.stderr)
      assert.ok(Date.now() - started >= 1000, 'it waited as Retry-After said')
      assert.equal(stand.queries.length, 2)
      refusals = Infinity
      const refused = await runCli(args('job', 'list', '--json'), {env})
      assert.equal(refused.code, 5)
      const error = (JSON.parse(refused.stdout) as {error: {code: string; hint: string}}).error
      assert.equal(error.code, 'indexer_rate_limited')
      assert.match(error.hint, /--source chain/)
    } finally {
      await stand.close()
    }
  })
})
