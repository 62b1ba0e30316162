import bs58 from 'bs58'
import {strict as assert} from 'node:assert'
import type {IncomingMessage, ServerResponse} from 'node:http'
import {join} from 'node:path'

import {verifySignature} from '../../../src/lib/keys/ed25519.js'
import {isGpunetError} from '../../../src/lib/errors.js'
import {configureHttp} from '../../../src/lib/http/client.js'
import {loginPrefix, SecretsClient} from '../../../src/lib/secrets/client.js'
import {TokenCache} from '../../../src/lib/secrets/token-cache.js'
import {startProxy, startServer, type TestServer, withProxyVariables} from '../../helpers/http.js'
import {MemoryAuthority, newAddress, newWallet, sqliteAdapter, startService, tempDir} from '../../helpers/secrets.js'

describe('SecretsClient', () => {
  const authority = new MemoryAuthority()
  let s: Awaited<ReturnType<typeof startService>>
  let dir: {dir: string; remove: () => Promise<void>}
  before(async () => {
    s = await startService(sqliteAdapter, {authority})
    dir = await tempDir()
  })
  after(async () => {
    await s.stop()
    await dir.remove()
  })

  const logins = () => s.lines.filter((l) => l.includes('POST /login')).length

  it('sets, lists and deletes, logging in once per cached token', async () => {
    const cache = new TokenCache(join(dir.dir, 'tokens.json'))
    const wallet = newWallet()
    const before = logins()
    await new SecretsClient({url: s.url, wallet, cache}).set({A: '1', B: '2'})
    const again = new SecretsClient({url: `${s.url}/`, wallet, cache})
    assert.deepEqual(await again.list(), {A: '1', B: '2'})
    await again.delete('A')
    assert.deepEqual(await again.list(), {B: '2'})
    assert.equal(logins(), before + 1)
  })

  it('retries a login refused as a replay in the next second', async () => {
    const wallet = newWallet()
    const first = new SecretsClient({url: s.url, wallet, cache: null})
    const second = new SecretsClient({url: s.url, wallet, cache: null})
    const [a, b] = await Promise.all([first.login(), second.login()])
    assert.notEqual(a, b)
  })

  it('reads the poster secrets a job refers to, as the node running it', async () => {
    const poster = newWallet()
    const node = newWallet()
    const job = newAddress()
    await new SecretsClient({url: s.url, wallet: poster, cache: null}).set({USED: 'u', UNUSED: 'x'})
    authority.run(job, {
      node: node.address,
      poster: poster.address,
      definition: {ops: [{args: {cmd: ['run', '--key', '%%secrets.USED%%']}}]},
    })
    const client = new SecretsClient({url: s.url, wallet: node, job, cache: null})
    assert.deepEqual(await client.list(), {USED: 'u'})
    await assert.rejects(
      client.set({USED: 'changed'}),
      (error) => isGpunetError(error) && error.exitCode === 6 && error.code === 'read_only_token',
    )
  })

  it("keeps a job's token apart from its wallet's own in one cache: each reads what it may, either order", async () => {
    const cache = new TokenCache(join(dir.dir, 'job-tokens.json'))
    const poster = newWallet()
    const node = newWallet()
    const job = newAddress()
    await new SecretsClient({url: s.url, wallet: poster, cache: null}).set({USED: 'u'})
    authority.run(job, {
      node: node.address,
      poster: poster.address,
      definition: {ops: [{args: {cmd: ['%%secrets.USED%%']}}]},
    })
    // The node's own secrets, through the cache: its owner token is cached under its URL and address.
    await new SecretsClient({url: s.url, wallet: node, cache}).set({OWN: 'mine'})
    assert.deepEqual(await new SecretsClient({url: s.url, wallet: node, job, cache}).list(), {USED: 'u'})
    assert.deepEqual(await new SecretsClient({url: s.url, wallet: node, cache}).list(), {OWN: 'mine'})
    const other = newAddress()
    authority.run(other, {node: node.address, poster: poster.address, definition: {ops: []}})
    assert.deepEqual(await new SecretsClient({url: s.url, wallet: node, job: other, cache}).list(), {})
  })

  it('maps refusals to exit codes: 7 unknown name or job, 3 bad input', async () => {
    const client = new SecretsClient({url: s.url, wallet: newWallet(), cache: null})
    await assert.rejects(client.delete('MISSING'), (error) => isGpunetError(error) && error.exitCode === 7)
    await assert.rejects(client.set({A: 'x'.repeat(70_000)}), (error) => isGpunetError(error) && error.exitCode === 3)
    const stranger = new SecretsClient({url: s.url, wallet: newWallet(), job: newAddress(), cache: null})
    await assert.rejects(
      stranger.list(),
      (error) => isGpunetError(error) && error.exitCode === 7 && error.code === 'unknown_job',
    )
  })
})

describe('SecretsClient over the shared HTTP client', () => {
  // A stand-in service: logins get a token; `secrets` decides the answers to /secrets.
  const standIn =
    (
      secrets: (req: IncomingMessage, res: ServerResponse, count: number) => void,
      // Another implementation by default: no health document, so no bound login message.
      health: (res: ServerResponse) => void = (res) => res.writeHead(404).end(),
    ) =>
    (req: IncomingMessage, res: ServerResponse) => {
      if (req.url?.endsWith('/health')) return void health(res)
      if (req.url?.endsWith('/login')) {
        res.setHeader('content-type', 'application/json').end(JSON.stringify({token: 'stand-in-token'}))
        return
      }
      secrets(req, res, ++count)
    }
  let count = 0
  const servers: TestServer[] = []
  beforeEach(async () => {
    count = 0
    await configureHttp({retry: {minDelayMs: 50}})
  })
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()))
    await configureHttp()
  })
  const serve = async (handler: Parameters<typeof startServer>[0]) => {
    servers.push(await startServer(handler))
    return servers.at(-1)!
  }

  it('reads again after a 503 with Retry-After, waiting as told', async () => {
    const times: number[] = []
    const server = await serve(
      standIn((_req, res, n) => {
        times.push(Date.now())
        if (n === 1) res.writeHead(503, {'retry-after': '1'}).end()
        else res.setHeader('content-type', 'application/json').end('{"A":"1"}')
      }),
    )
    const client = new SecretsClient({url: server.url, wallet: newWallet(), cache: null, allowUnboundLogin: true})
    assert.deepEqual(await client.list(), {A: '1'})
    assert.deepEqual(server.seen, ['GET /health', 'POST /login', 'GET /secrets', 'GET /secrets'])
    assert.ok(times[1]! - times[0]! >= 950, `waited ${times[1]! - times[0]!} ms`)
  })

  it('never stores twice: a 503 to a POST fails with exit 5 after one request', async () => {
    const server = await serve(standIn((_req, res) => res.writeHead(503).end()))
    const client = new SecretsClient({url: server.url, wallet: newWallet(), cache: null, allowUnboundLogin: true})
    await assert.rejects(
      client.set({A: '1'}),
      (error) => isGpunetError(error) && error.exitCode === 5 && /try again later/.test(error.hint ?? ''),
    )
    assert.deepEqual(server.seen, ['GET /health', 'POST /login', 'POST /secrets'])
  })

  it('fails with exit 5 naming the timeout when the service never answers', async () => {
    await configureHttp({timeouts: {headersMs: 300}})
    const server = await serve(() => {})
    const client = new SecretsClient({url: server.url, wallet: newWallet(), cache: null, allowUnboundLogin: true})
    await assert.rejects(
      client.list(),
      (error) =>
        isGpunetError(error) &&
        error.exitCode === 5 &&
        error.message === `cannot reach the secrets service at ${server.url} (no answer within 300 ms)`,
    )
  })

  it("signs the network's message only for the network's own services, a bound one where advertised, else the spec's", async () => {
    const wallet = newWallet()
    const signed: string[] = []
    // A stand-in service that records which message the login's signature is of.
    const checking = (req: IncomingMessage, res: ServerResponse) => {
      let body = ''
      req.on('data', (chunk: Buffer) => (body += chunk))
      req.on('end', () => {
        // Only the local stand-in advertises a bound message, for its own host.
        if (req.url?.endsWith('/health') && req.headers.host === bound)
          return res.setHeader('content-type', 'application/json').end(JSON.stringify({login: {hosts: [bound]}}))
        if (!req.url?.endsWith('/login')) return res.setHeader('content-type', 'application/json').end('{}')
        const {signature, timestamp} = JSON.parse(body) as {signature: string; timestamp: number}
        const prefix = ['service_secret_', 'nosana_secret_', `gpunet_secret_${bound}_`].find((p) =>
          verifySignature(
            bs58.decode(signature),
            new TextEncoder().encode(`${p}${timestamp}`),
            bs58.decode(wallet.address),
          ),
        )
        signed.push(`${req.headers.host} ${prefix}`)
        res.setHeader('content-type', 'application/json').end(JSON.stringify({token: 't'}))
      })
    }
    let bound = ''
    const proxy = await startProxy(checking)
    const local = await serve(checking)
    const advertising = await serve(checking)
    bound = new URL(advertising.url).host
    servers.push(proxy)
    await withProxyVariables({HTTP_PROXY: proxy.url}, async () => {
      // Plain http, even to the network's own hosts: the unbound message, and only when asked for.
      for (const url of [
        'http://secrets.nosana.ci',
        'http://SECRETS.K8S.DEV.NOS.CI./',
        'http://secrets.nosana.ci.gpunet-test.invalid',
        'http://nosana.ci',
        local.url,
      ])
        await new SecretsClient({url, wallet, cache: null, allowUnboundLogin: true}).list()
      await new SecretsClient({url: advertising.url, wallet, cache: null}).list()
    })
    assert.deepEqual(signed, [
      'secrets.nosana.ci service_secret_',
      'secrets.k8s.dev.nos.ci. service_secret_',
      'secrets.nosana.ci.gpunet-test.invalid service_secret_',
      'nosana.ci service_secret_',
      `${new URL(local.url).host} service_secret_`,
      `${bound} gpunet_secret_${bound}_`,
    ])
  })

  it("signs nosana_secret_ only over https at the network's port: not over http, not on another port", () => {
    for (const url of [
      'https://secrets.nosana.ci',
      'https://secrets.nosana.ci:443/',
      'https://SECRETS.K8S.DEV.NOS.CI./',
    ])
      assert.equal(loginPrefix(url), 'nosana_secret_', url)
    for (const url of [
      'http://secrets.nosana.ci',
      'http://secrets.nosana.ci:443',
      'http://secrets.k8s.dev.nos.ci:80',
      'https://secrets.nosana.ci:8443',
      'https://secrets.k8s.dev.nos.ci:444/',
      'https://secrets.nosana.ci.evil.example',
    ])
      assert.equal(loginPrefix(url), 'service_secret_', url)
  })

  it('refuses to sign the unbound message for a service whose /health lists no host of its own, saying why', async () => {
    const wallet = newWallet()
    // Another service of the same owner would take a service_secret_ signature sent here.
    const health = [
      (res: ServerResponse) => res.writeHead(404).end(),
      (res: ServerResponse) => res.setHeader('content-type', 'application/json').end('{"status":"ok"}'),
      (res: ServerResponse) =>
        res.setHeader('content-type', 'application/json').end('{"login":{"hosts":["other.example:443"]}}'),
    ]
    for (const [index, answer] of health.entries()) {
      const server = await serve(
        standIn((_req, res) => res.setHeader('content-type', 'application/json').end('{}'), answer),
      )
      await assert.rejects(
        new SecretsClient({url: server.url, wallet, cache: null}).list(),
        (error) =>
          isGpunetError(error) &&
          error.exitCode === 6 &&
          error.code === 'unbound_login_refused' &&
          /would log in as you at any other secrets service/.test(error.message) &&
          /--allow-unbound-login/.test(error.hint ?? ''),
        `health answer ${index}`,
      )
      assert.deepEqual(server.seen, ['GET /health'], 'nothing signed, nothing sent')
    }
  })

  it('reaches a remote service through HTTP_PROXY', async () => {
    const proxy = await startProxy(standIn((_req, res) => res.setHeader('content-type', 'application/json').end('{}')))
    servers.push(proxy)
    await withProxyVariables({HTTP_PROXY: proxy.url}, async () => {
      const client = new SecretsClient({
        url: 'http://secrets.gpunet-test.invalid',
        wallet: newWallet(),
        cache: null,
        allowUnboundLogin: true,
      })
      assert.deepEqual(await client.list(), {})
    })
    assert.deepEqual(proxy.seen, [
      'GET http://secrets.gpunet-test.invalid/health',
      'POST http://secrets.gpunet-test.invalid/login',
      'GET http://secrets.gpunet-test.invalid/secrets',
    ])
  })
})
