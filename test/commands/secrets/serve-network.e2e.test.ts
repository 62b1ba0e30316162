/** `secrets serve --network devnet|mainnet` against a stand-in RPC and gateway holding accounts as deployed. */
import {strict as assert} from 'node:assert'
import {type ChildProcess, spawn} from 'node:child_process'
import {once} from 'node:events'
import {readFileSync} from 'node:fs'

import {Keypair, PublicKey} from '@solana/web3.js'

import {JobState} from '../../../src/lib/market/codec/accounts.js'
import {BIN} from '../../helpers/cli.js'
import {eventually} from '../../helpers/eventually.js'
import {startServer, type TestServer} from '../../helpers/http.js'
import {call, login, newWallet, signLogin, tempDir} from '../../helpers/secrets.js'
import {putJobAccount, putRunAccount} from '../../helpers/standin-network.js'
import {
  cidDigest,
  ipfsCid,
  startStandinPinning,
  startStandinRpc,
  type StandinPinning,
  type StandinRpc,
} from '../../helpers/standin.js'

interface Started {
  child: ChildProcess
  document: {url: string; network: string; rpcUrl: string; ipfsGateway: string; storage: string}
  stderr: () => string
}

/** `secrets serve --json` in a child process, resolved with the JSON document it prints once it listens. */
async function serveJson(args: string[], env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, [BIN, 'secrets', 'serve', '--port', '0', '--json', ...args], {
    env: {...process.env, NO_COLOR: '1', ...env},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const document = await new Promise<Started['document']>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
      try {
        resolve(JSON.parse(stdout) as Started['document'])
      } catch {
        // not complete yet
      }
    })
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)))
  })
  return {child, document, stderr: () => stderr}
}

function assertError(answer: {status: number; body: unknown}, status: number, code: string): string {
  assert.equal(answer.status, status, JSON.stringify(answer.body))
  const error = (answer.body as {error: {code: string; message: string}}).error
  assert.equal(error.code, code)
  return error.message
}

for (const network of ['devnet', 'mainnet'] as const) {
  describe(`gpunet secrets serve --network ${network} (stand-in RPC and gateway)`, function () {
    this.timeout(60_000)
    let rpc: StandinRpc
    // Only its gateway is used: the service reads definitions and never pins.
    let gateway: StandinPinning
    const poster = newWallet()
    const node = newWallet()
    let server: Started
    let cleanup: () => Promise<void>

    // The service checks a run's paid time against its clock, so runs here start now.
    const now = () => Math.floor(Date.now() / 1000)
    /** A job of the poster on the stand-in chain referring to `names`; `node` runs it unless told otherwise. */
    const putJob = async (
      names: string[],
      options: {state?: number; runBy?: string | null; owner?: PublicKey} = {},
    ) => {
      const job = Keypair.generate().publicKey
      const env = Object.fromEntries(names.map((n) => [n, `%%secrets.${n}%%`]))
      const bytes = Buffer.from(
        JSON.stringify({
          version: '0.1',
          type: 'container',
          ops: [{id: 'a', args: {image: 'x', env, job: job.toBase58()}}],
        }),
      )
      const cid = await ipfsCid(bytes)
      gateway.content.set(cid, bytes)
      const fields = {
        ipfsJob: cidDigest(cid),
        timeout: 3600n,
        state: options.state ?? JobState.QUEUED,
        payer: poster.keypair().publicKey,
      }
      putJobAccount(rpc, network, job, fields, options.owner)
      const runner = node.keypair().publicKey
      if (options.runBy !== null) putRunAccount(rpc, network, job, runner, runner, now())
      return job.toBase58()
    }

    before(async () => {
      rpc = await startStandinRpc()
      gateway = await startStandinPinning('not-used')
      const {dir, remove} = await tempDir()
      cleanup = remove
      server = await serveJson(
        ['--network', network, '--rpc', rpc.url, '--ipfs-gateway', gateway.url, '--data-dir', dir],
        {XDG_CONFIG_HOME: dir, GPUNET_RPC_URL: '', GPUNET_IPFS_GATEWAY: ''},
      )
      const token = await login(server.document.url, poster)
      const set = await call(server.document.url, 'POST', '/secrets', {
        token,
        params: {secrets: {HF_TOKEN: 'hf', DB_PASS: 'db', NOT_REFERENCED: 'no'}},
      })
      assert.equal(set.status, 200)
    })

    after(async () => {
      if (server.child.exitCode === null) {
        const exited = once(server.child, 'exit')
        server.child.kill('SIGTERM')
        await exited
      }
      await rpc.close()
      await gateway.close()
      await cleanup()
    })

    it('prints one JSON document naming the URL, the network, its RPC, its gateway and its storage', () => {
      const {document} = server
      assert.match(document.url, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.equal(document.network, network)
      assert.equal(document.rpcUrl, rpc.url)
      assert.equal(document.ipfsGateway, gateway.url)
      assert.match(document.storage, /^SQLite /)
    })

    it('gives the node with a run exactly the names the definition refers to', async () => {
      const job = await putJob(['HF_TOKEN', 'DB_PASS', 'MISSING'])
      const token = await login(server.document.url, node, {job})
      assert.deepEqual((await call(server.document.url, 'GET', '/secrets', {token})).body, {
        DB_PASS: 'db',
        HF_TOKEN: 'hf',
      })
    })

    it('gives a stopped job claimed again by the node, found among several runs', async () => {
      const job = await putJob(['HF_TOKEN'], {state: JobState.STOPPED})
      const other = Keypair.generate().publicKey
      putRunAccount(rpc, network, Keypair.generate().publicKey, other, other, now()) // another job's run
      const token = await login(server.document.url, node, {job})
      assert.deepEqual((await call(server.document.url, 'GET', '/secrets', {token})).body, {HF_TOKEN: 'hf'})
    })

    it('refuses another key, a finished job, an unknown job and a job account the program does not own', async () => {
      const url = server.document.url
      const job = await putJob(['HF_TOKEN'])
      assertError(await call(url, 'POST', '/login', {params: signLogin(newWallet(), {job})}), 403, 'not_job_node')
      const done = await putJob(['HF_TOKEN'], {state: JobState.DONE, runBy: null})
      assertError(await call(url, 'POST', '/login', {params: signLogin(node, {job: done})}), 403, 'job_not_running')
      const unknown = Keypair.generate().publicKey.toBase58()
      assertError(await call(url, 'POST', '/login', {params: signLogin(node, {job: unknown})}), 404, 'unknown_job')
      const forged = await putJob(['HF_TOKEN'], {owner: Keypair.generate().publicKey})
      assertError(await call(url, 'POST', '/login', {params: signLogin(node, {job: forged})}), 404, 'unknown_job')
    })

    it('answers 50 refused logins for no such job and for a foreign account with a few RPC reads', async () => {
      const url = server.document.url
      const unknown = Keypair.generate().publicKey.toBase58()
      const forged = await putJob(['HF_TOKEN'], {owner: Keypair.generate().publicKey})
      const before = rpc.requests.length
      const answers = await Promise.all(
        Array.from({length: 50}, (_, i) =>
          call(url, 'POST', '/login', {params: signLogin(newWallet(), {job: i % 2 ? unknown : forged})}),
        ),
      )
      for (const answer of answers) assertError(answer, 404, 'unknown_job')
      const reads = rpc.requests.slice(before).map((r) => r.method)
      assert.ok(reads.length <= 4, `${reads.length} RPC requests: ${reads.join(', ')}`)
    })

    it('never locks out a node whose claim the RPC had not seen: its next login reads the job again', async () => {
      const url = server.document.url
      const job = await putJob(['HF_TOKEN'], {runBy: null})
      assertError(await call(url, 'POST', '/login', {params: signLogin(node, {job})}), 403, 'job_not_running')
      const runner = node.keypair().publicKey
      putRunAccount(rpc, network, new PublicKey(job), runner, runner, now())
      const token = await login(url, node, {job})
      assert.deepEqual((await call(url, 'GET', '/secrets', {token})).body, {HF_TOKEN: 'hf'})
    })

    it('answers 503 with Retry-After naming the setting when the gateway or the RPC does not answer', async () => {
      const url = server.document.url
      const job = await putJob(['DB_PASS'])
      await gateway.close()
      const storeDown = await call(url, 'POST', '/login', {params: signLogin(node, {job})})
      assert.match(assertError(storeDown, 503, 'content_store_unavailable'), /--ipfs-gateway/)
      assert.ok(Number(storeDown.headers.get('retry-after')) >= 1)

      await rpc.close()
      const chainDown = await call(url, 'POST', '/login', {
        params: signLogin(node, {job: Keypair.generate().publicKey.toBase58()}),
      })
      assert.match(assertError(chainDown, 503, 'chain_unavailable'), /--rpc/)
      assert.ok(Number(chainDown.headers.get('retry-after')) >= 1)
      assert.match(server.stderr(), /POST \/login 503/)
    })
  })
}

describe('gpunet secrets serve --network devnet against a hostile gateway', function () {
  this.timeout(60_000)
  const MiB = 1024 * 1024
  let rpc: StandinRpc
  let gateway: TestServer
  let server: Started
  let cleanup: () => Promise<void>
  const node = newWallet()
  /** Bytes each gateway answer got out before its connection closed, by CID. */
  const served = new Map<string, number>()
  /** The CIDs whose gateway answer's connection has closed. */
  const closed = new Set<string>()
  /** What the gateway does for a CID: the bytes it serves, all at once or one chunk a second, and their length header. */
  const behaviours = new Map<string, {size: number; chunk: number; everyMs: number; contentLength: boolean}>()

  before(async () => {
    rpc = await startStandinRpc()
    gateway = await startServer((req, res) => {
      const cid = req.url?.split('/').pop() ?? ''
      const how = behaviours.get(cid)
      if (!how) return res.writeHead(404).end()
      res.writeHead(200, how.contentLength ? {'content-length': String(how.size)} : {})
      let sent = 0
      served.set(cid, 0)
      res.once('close', () => closed.add(cid))
      const chunk = Buffer.alloc(how.chunk, 0x20)
      const pump = () => {
        // Written as fast as the reader takes them (backpressure), or one chunk every `everyMs`.
        while (sent < how.size && !res.destroyed) {
          const ok = res.write(chunk)
          sent += chunk.length
          served.set(cid, sent)
          if (how.everyMs > 0) return void setTimeout(pump, how.everyMs)
          if (!ok) return void res.once('drain', pump)
        }
        if (sent >= how.size) res.end()
      }
      pump()
    })
    const {dir, remove} = await tempDir()
    cleanup = remove
    server = await serveJson(
      ['--network', 'devnet', '--rpc', rpc.url, '--ipfs-gateway', gateway.url, '--data-dir', dir],
      {XDG_CONFIG_HOME: dir, GPUNET_RPC_URL: '', GPUNET_IPFS_GATEWAY: ''},
    )
  })

  after(async () => {
    if (server.child.exitCode === null) {
      const exited = once(server.child, 'exit')
      server.child.kill('SIGTERM')
      await exited
    }
    await rpc.close()
    await gateway.close()
    await cleanup()
  })

  /** A running job of `node` whose definition the gateway serves as `how` says. */
  async function hostileJob(how: {size: number; chunk: number; everyMs: number; contentLength: boolean}) {
    const job = Keypair.generate().publicKey
    const cid = await ipfsCid(Buffer.from(job.toBase58()))
    behaviours.set(cid, how)
    const fields = {
      ipfsJob: cidDigest(cid),
      timeout: 3600n,
      state: JobState.QUEUED,
      payer: newWallet().keypair().publicKey,
    }
    putJobAccount(rpc, 'devnet', job, fields)
    const runner = node.keypair().publicKey
    putRunAccount(rpc, 'devnet', job, runner, runner, Math.floor(Date.now() / 1000))
    return {job: job.toBase58(), cid}
  }

  /** The service's peak resident memory (VmHWM), in bytes. */
  const peakMemory = () => {
    const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8')
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) * 1024
  }

  it('refuses a definition over 1 MiB: by its length header, or once the stream passes it, reading no further', async () => {
    const declared = await hostileJob({size: 10 * MiB, chunk: 64 * 1024, everyMs: 0, contentLength: true})
    const refused = await call(server.document.url, 'POST', '/login', {params: signLogin(node, {job: declared.job})})
    assert.match(assertError(refused, 403, 'definition_too_large'), /larger than 1048576 bytes/)

    // No length header, and far more bytes than any reader should take: 4 GiB.
    const endless = await hostileJob({size: 4096 * MiB, chunk: 64 * 1024, everyMs: 0, contentLength: false})
    const cut = await call(server.document.url, 'POST', '/login', {params: signLogin(node, {job: endless.job})})
    assertError(cut, 403, 'definition_too_large')
    await eventually(
      'the gateway connection closed',
      10_000,
      async () => (closed.has(endless.cid) ? true : undefined),
      20,
    )
    const sent = served.get(endless.cid) as number
    // The service read past 1 MiB and dropped the connection: what it took is the cap plus socket buffers.
    assert.ok(sent > MiB && sent < 64 * MiB, `the gateway got ${sent} bytes out`)
    assert.ok(peakMemory() < 400 * MiB, `peak memory ${peakMemory()} bytes`)
  })

  it('answers 503 with Retry-After to a login whose gateway trickles, instead of holding it open', async () => {
    const trickle = await hostileJob({size: 100_000, chunk: 10, everyMs: 50, contentLength: false})
    const answer = await call(server.document.url, 'POST', '/login', {params: signLogin(node, {job: trickle.job})})
    assert.equal(answer.status, 503, JSON.stringify(answer.body))
    assert.ok(Number(answer.headers.get('retry-after')) >= 1)
    // At 200 bytes a second, the login gave up long before the 100 kB would have come.
    assert.ok((served.get(trickle.cid) as number) < 100_000)
  })
})
