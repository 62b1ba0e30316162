/**
 * The calls the network's CLI (nosana-ci/nosana-cli, v1.0.131) makes, replayed against a localnet created with
 * `--ids devnet` (issue 41): @nosana/sdk configured as the CLI configures it (`--network devnet`, `--rpc` and
 * `--market` from flags; the jobs program, mint, pinning service and gateway built in), its content requests going
 * through the localnet's proxy (`HTTPS_PROXY`), and the host manager's routes the CLI asks first.
 */
import {strict as assert} from 'node:assert'
import {readFileSync} from 'node:fs'
import {request} from 'node:http'
import {request as httpsRequest} from 'node:https'
import {connect} from 'node:net'

import {Client, type JobDefinition} from '@nosana/sdk'
import WebSocket from 'ws'
import {PublicKey} from '@solana/web3.js'

import {loopbackLookup} from '../../src/lib/http/client.js'
import {NETWORK_PRESETS} from '../../src/lib/market/networks.js'
import {readKeypair} from '../../src/lib/keys/wallet.js'
import {type CliSandbox, cliSandbox} from '../helpers/cli-localnet.js'
import {requirePodman, TEST_IMAGE} from '../helpers/podman.js'
import {eventually} from '../helpers/eventually.js'
import {restoreSdkPresets} from '../helpers/sdk-presets.js'

interface Status {
  rpcUrl: string
  proxyUrl: string
  programId: string
  mint: string
  market: string
  ids: string
}

/** A GET over https trusting `ca` alone, `*.localhost` reached at 127.0.0.1 (a resolver may not know it). */
function httpsGet(url: string, ca: Buffer): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, {ca, lookup: loopbackLookup}, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (d: string) => (body += d))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

/** A request sent to the proxy in absolute form, as axios sends it: its status and body. */
function throughProxy(proxy: string, url: string): Promise<{status: number; body: string}> {
  const {hostname, port} = new URL(proxy)
  return new Promise((resolve, reject) => {
    const req = request({host: hostname, port, method: 'GET', path: url, headers: {host: new URL(url).host}}, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (d: string) => (body += d))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

const definition = (cmd: string[]): JobDefinition => ({
  version: '0.1',
  type: 'container',
  meta: {trigger: 'cli'},
  ops: [{type: 'container/run', id: 'hello', args: {image: TEST_IMAGE, cmd}}],
})

describe("the network's CLI against a localnet with devnet ids (replayed through @nosana/sdk)", function () {
  this.timeout(120_000)
  requirePodman()
  let box: CliSandbox
  let status: Status
  let sdk: Client
  const proxyBefore = {https: process.env.HTTPS_PROXY, http: process.env.HTTP_PROXY, no: process.env.NO_PROXY}

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    Object.assign(box.env, {GPUNET_NODE_PULL: 'never'})
    const started = await box.run(['localnet', 'start', '--detach', '--ids', 'devnet', '--json'])
    assert.equal(started.code, 0, started.stderr)
    status = JSON.parse(started.stdout) as Status
    // As a user of the network's CLI sets it: its pinning service and gateway (https) go through the proxy.
    process.env.HTTPS_PROXY = status.proxyUrl
    delete process.env.HTTP_PROXY
    delete process.env.NO_PROXY
    // `nosana job post --network devnet --rpc <localnet> --market <market>`: nothing else is configured.
    restoreSdkPresets()
    sdk = new Client('devnet', readKeypair(box.env.GPUNET_WALLET!), {
      solana: {network: status.rpcUrl, market_address: status.market, priority_fee: 100000},
    })
  })
  after(async () => {
    for (const [name, value] of [
      ['HTTPS_PROXY', proxyBefore.https],
      ['HTTP_PROXY', proxyBefore.http],
      ['NO_PROXY', proxyBefore.no],
    ] as const) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    await box?.cleanup()
  })

  it("has devnet's jobs program and mint, and the SDK's built-in addresses find them", () => {
    assert.equal(status.ids, 'devnet')
    assert.equal(status.programId, NETWORK_PRESETS.devnet.programId.toBase58())
    assert.equal(status.mint, NETWORK_PRESETS.devnet.mint!.toBase58())
    assert.equal(sdk.solana.config.jobs_address, status.programId)
    assert.equal(sdk.solana.config.nos_address, status.mint)
  })

  it('reads the balances of the funded wallet, as the CLI prints them first', async () => {
    assert.equal(await sdk.solana.getSolBalance(), 100 * 1e9)
    assert.equal((await sdk.solana.getNosBalance())?.uiAmount, 1000)
  })

  it('answers the host manager routes: /rpc, /markets/ and a market by slug or address', async () => {
    const get = async (path: string) => {
      const res = await fetch(`${status.rpcUrl}${path}`)
      return {status: res.status, body: (await res.json()) as Record<string, unknown>}
    }
    assert.deepEqual((await get('/rpc')).body, {url: status.rpcUrl})
    const markets = (await get('/markets/')).body as unknown as {address: string; slug: string; name: string}[]
    assert.equal(markets[0]!.address, status.market)
    assert.equal(markets[0]!.slug, 'localnet')
    const bySlug = await get('/markets/localnet')
    assert.equal(bySlug.body.address, status.market)
    assert.equal(typeof bySlug.body.nos_job_price_per_second, 'number')
    assert.equal((await get(`/markets/${status.market}`)).body.slug, 'localnet')
    assert.equal((await get('/markets/nope')).status, 404)
    assert.equal((await get('/markets/%E0%A4%A')).status, 404, 'a broken %-escape is no market, not a 500')
  })

  it('pins a definition through the proxy, lists it, runs it, reads it and its result back, and extends a job', async () => {
    const cmd = ['sh', '-c', 'sleep 1; echo hello from the network cli']
    const cid = await sdk.ipfs.pin(definition(cmd))
    const posted = (await sdk.jobs.list(cid, 300, status.market)) as {job: string}
    const job = new PublicKey(posted.job)
    const listed = await sdk.jobs.get(job)
    assert.equal(listed.ipfsJob, cid)
    const done = await eventually('the result', 60_000, async () => {
      const read = await sdk.jobs.get(job)
      return read.state === 'COMPLETED' ? read : undefined
    })
    const back = (await sdk.ipfs.retrieve(done.ipfsJob!)) as {ops: {args: {cmd: string[]}}[]}
    assert.deepEqual(back.ops[0]!.args.cmd, cmd)
    assert.match(JSON.stringify(await sdk.ipfs.retrieve(done.ipfsResult!)), /hello from the network cli/)

    // A longer job, extended while it runs, then ended as `nosana job stop` ends a RUNNING one.
    const long = (await sdk.jobs.list(await sdk.ipfs.pin(definition(['sleep', '60'])), 300, status.market)) as {
      job: string
    }
    const running = new PublicKey(long.job)
    await eventually('the run', 30_000, async () =>
      (await sdk.jobs.get(running)).state === 'RUNNING' ? true : undefined,
    )
    // `nosana job extend --timeout 600` adds 600 s: the SDK sends the new total (300 + 600) to the program.
    await sdk.jobs.extend(running, 600)
    assert.equal(Number((await sdk.jobs.get(running)).timeout), 900)
    await sdk.jobs.end(running)
    assert.equal((await sdk.jobs.get(running)).state, 'COMPLETED')
  })

  it('prints, as `nosana job post` does, service and deployment URLs that answer over https through FRP_SERVER_ADDRESS', async () => {
    const st = JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as {
      frpServerAddress: {https: string}
      caCertificate: string
    }
    const serve = 'mkdir -p /www && echo served to the cli > /www/index.html && exec httpd -f -p 8080 -h /www'
    const web = definition(['sh', '-c', serve])
    const exposing = {
      ...web,
      deployment_id: 'cli-replay',
      ops: [{...web.ops[0]!, id: 'web', args: {...web.ops[0]!.args, expose: 8080}}],
    } as JobDefinition
    const posted = (await sdk.jobs.list(await sdk.ipfs.pin(exposing), 300, status.market)) as {job: string}
    const {getExposeIdHash, createHash} = await import('@nosana/sdk')
    // As the CLI prints them: `getJobUrls` and, for a definition with deployment_id, its deployment endpoints table.
    const serviceUrl = `https://${getExposeIdHash(posted.job, 0, 8080)}.${st.frpServerAddress.https}`
    const poster = sdk.solana.wallet.publicKey.toBase58()
    const deploymentUrl = `https://${getExposeIdHash(createHash(`cli-replay:${poster}`, 45), 'web', 0)}.${st.frpServerAddress.https}`
    const ca = readFileSync(st.caCertificate)
    for (const url of [serviceUrl, deploymentUrl]) {
      const answer = await eventually(`${url} answering`, 60_000, async () => {
        const got = await httpsGet(url, ca).catch(() => null)
        return got?.status === 200 ? got : undefined
      })
      assert.equal(answer.body, 'served to the cli\n')
    }
    await sdk.jobs.end(new PublicKey(posted.job))
  })

  it("streams /log with whole lines and stops a running job with the CLI's own header", async () => {
    const gateway = JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as {gatewayUrl: string}
    const port = Number(new URL(gateway.gatewayUrl).port)
    const cmd = ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done']
    const posted = (await sdk.jobs.list(await sdk.ipfs.pin(definition(cmd)), 300, status.market)) as {job: string}
    const job = posted.job
    const node = await eventually('the run', 30_000, async () => {
      const read = await sdk.jobs.get(job)
      return read.state === 'RUNNING' ? read.node : undefined
    })
    const host = `${node}.node.localhost:${port}`
    // The CLI's socket request (src/services/websocket.ts): /log, its SIGN_MESSAGE signed without a time part.
    const header = await sdk.authorization.generate('Hello Nosana Node!')
    const lines = await new Promise<string[]>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/`, {headers: {host}})
      const got: string[] = []
      ws.on('open', () =>
        ws.send(
          JSON.stringify({
            path: '/log',
            header,
            body: {jobAddress: job, address: sdk.solana.wallet.publicKey.toString()},
          }),
        ),
      )
      ws.on('message', (raw) => {
        const frame = JSON.parse(raw.toString()) as {path: string; data: string}
        const entry = JSON.parse(frame.data) as {type: string; log: string}
        if (frame.path === 'log' && entry.type === 'log') got.push(entry.log)
        if (got.length >= 3) {
          ws.close()
          resolve(got)
        }
      })
      ws.on('close', (code) =>
        got.length >= 3 ? undefined : reject(new Error(`closed ${code} after ${got.length} lines`)),
      )
      ws.on('error', reject)
    })
    assert.deepEqual(lines.slice(0, 3), ['tick 1\n', 'tick 2\n', 'tick 3\n'])
    // The CLI's stop (postStopJobServiceURLWithRetry): POST /job/<job>/stop with its lasting header.
    const headers = await sdk.authorization.generateHeader('Hello Nosana Node!')
    const stop = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/job/${job}/stop`,
          headers: {host, authorization: headers.get('Authorization')!},
        },
        (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        },
      )
      req.on('error', reject)
      req.end()
    })
    assert.equal(stop, 200)
    const ended = await eventually('the end', 30_000, async () => {
      const read = await sdk.jobs.get(job)
      return read.state === 'COMPLETED' || read.state === 'STOPPED' ? read : undefined
    })
    assert.ok(ended.timeEnd > 0)
  })

  it('delists a queued job, as `nosana job stop` does for a QUEUED one', async () => {
    const stopped = await box.run(['localnet', 'stop'])
    assert.equal(stopped.code, 0, stopped.stderr)
    const started = await box.run(['localnet', 'start', '--detach', '--no-node', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const fresh = JSON.parse(started.stdout) as Status
    restoreSdkPresets()
    const queuedSdk = new Client('devnet', readKeypair(box.env.GPUNET_WALLET!), {
      solana: {network: fresh.rpcUrl, market_address: fresh.market, priority_fee: 100000},
    })
    process.env.HTTPS_PROXY = fresh.proxyUrl
    const queued = (await queuedSdk.jobs.list(await queuedSdk.ipfs.pin(definition(['true'])), 300, fresh.market)) as {
      job: string
    }
    assert.equal((await queuedSdk.jobs.get(queued.job)).state, 'QUEUED')
    await queuedSdk.jobs.delist(queued.job)
    await assert.rejects(queuedSdk.jobs.get(queued.job))
  })

  it('the proxy refuses every other host and CONNECT', async () => {
    status = JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as Status
    const other = await throughProxy(status.proxyUrl, 'http://example.org/')
    assert.equal(other.status, 403)
    assert.match(other.body, /nothing leaves this machine/)
    const otherPath = await throughProxy(status.proxyUrl, 'http://api.pinata.cloud/data/pinList')
    assert.equal(otherPath.status, 403)
    const {hostname, port} = new URL(status.proxyUrl)
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () =>
        socket.write('CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n'),
      )
      let text = ''
      socket.setEncoding('utf8').on('data', (d: string) => (text += d))
      socket.on('end', () => resolve(text))
      socket.on('error', reject)
    })
    assert.match(answer, /^HTTP\/1\.1 405 /)
  })
})
