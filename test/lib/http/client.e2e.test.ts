import {strict as assert} from 'node:assert'
import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {fileURLToPath} from 'node:url'

import {configureHttp, describeHttpFailure, httpFetch, httpText, isLoopbackHost} from '../../../src/lib/http/client.js'
import {startProxy, startServer, type TestServer, withProxyVariables} from '../../helpers/http.js'
import {startUnacceptingPort} from '../../helpers/unaccepting-port.js'

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  assert.fail('expected the request to fail')
}

describe('httpFetch', () => {
  const servers: TestServer[] = []
  const serve = async (handler: Parameters<typeof startServer>[0]) => {
    const server = await startServer(handler)
    servers.push(server)
    return server
  }
  beforeEach(() => configureHttp({retry: {minDelayMs: 100}}))
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()))
    await configureHttp()
  })

  describe('retries', () => {
    it('sends a GET again after 503s, waiting longer each time, and returns the answer that worked', async () => {
      const times: number[] = []
      const server = await serve((_req, res) => {
        times.push(Date.now())
        if (times.length < 3) res.writeHead(503).end('busy')
        else res.end('ok')
      })
      const response = await httpFetch(`${server.url}/thing`)
      assert.equal(await response.text(), 'ok')
      assert.deepEqual(server.seen, ['GET /thing', 'GET /thing', 'GET /thing'])
      const [first, second] = [times[1]! - times[0]!, times[2]! - times[1]!]
      assert.ok(first >= 90, `first wait ${first} ms`)
      assert.ok(second >= 190, `second wait ${second} ms (backoff doubles)`)
    })

    it('never sends a POST twice: the 503 reaches the caller', async () => {
      const server = await serve((_req, res) => res.writeHead(503).end('busy'))
      const response = await httpFetch(`${server.url}/login`, {method: 'POST', body: '{}'})
      assert.equal(response.status, 503)
      assert.deepEqual(server.seen, ['POST /login'])
    })

    it('waits as long as Retry-After says before sending again', async () => {
      const times: number[] = []
      const server = await serve((_req, res) => {
        times.push(Date.now())
        if (times.length === 1) res.writeHead(429, {'retry-after': '1'}).end()
        else res.end('ok')
      })
      assert.equal(await (await httpFetch(server.url)).text(), 'ok')
      assert.equal(server.seen.length, 2)
      assert.ok(times[1]! - times[0]! >= 950, `waited ${times[1]! - times[0]!} ms, Retry-After said 1 s`)
    })

    it('hands the last failing answer to the caller once the retries are spent', async () => {
      await configureHttp({retry: {minDelayMs: 10, maxRetries: 2}})
      const server = await serve((_req, res) => res.writeHead(502).end('bad gateway'))
      const response = await httpFetch(server.url)
      assert.equal(response.status, 502)
      assert.equal(await response.text(), 'bad gateway')
      assert.equal(server.seen.length, 3)
    })

    it('does not retry a 4xx', async () => {
      const server = await serve((_req, res) => res.writeHead(404).end())
      assert.equal((await httpFetch(server.url)).status, 404)
      assert.equal(server.seen.length, 1)
    })
  })

  describe('timeouts', () => {
    it('gives up on a connection that never opens after the connect timeout', async () => {
      await configureHttp({timeouts: {connectMs: 300}, retry: {maxRetries: 0}})
      const port = await startUnacceptingPort()
      try {
        const error = await failure(httpFetch(`http://127.0.0.1:${port.port}/`))
        assert.equal(describeHttpFailure(error), 'no connection within 300 ms')
      } finally {
        port.close()
      }
    })

    it('gives up on a server that accepts the request but never answers after the headers timeout', async () => {
      await configureHttp({timeouts: {headersMs: 300}})
      const server = await serve(() => {})
      const error = await failure(httpFetch(server.url))
      assert.equal(describeHttpFailure(error), 'no answer within 300 ms')
      assert.equal(server.seen.length, 1)
    })

    it('gives up on a body that stops flowing after the body timeout', async () => {
      await configureHttp({timeouts: {bodyMs: 300}})
      const server = await serve((_req, res) => {
        res.writeHead(200, {'content-length': '10'})
        res.write('12345')
      })
      const response = await httpFetch(server.url)
      const error = await failure(response.text())
      assert.equal(describeHttpFailure(error), 'the answer stalled for 300 ms')
    })

    it('names the network error of a refused connection', async () => {
      await configureHttp({retry: {maxRetries: 0}})
      const server = await serve(() => {})
      await server.close()
      servers.pop()
      assert.equal(describeHttpFailure(await failure(httpFetch(server.url))), 'ECONNREFUSED')
    })
  })

  describe('proxy variables', () => {
    let proxy: TestServer
    beforeEach(async () => (proxy = await startProxy()))
    afterEach(() => proxy.close())

    it('sends plain HTTP through HTTP_PROXY', () =>
      withProxyVariables({HTTP_PROXY: proxy.url}, async () => {
        const response = await httpFetch('http://gpunet-test.invalid/path?q=1')
        assert.equal(await response.text(), 'via proxy')
        assert.deepEqual(proxy.seen, ['GET http://gpunet-test.invalid/path?q=1'])
      }))

    it('opens HTTPS tunnels through https_proxy', () =>
      withProxyVariables({https_proxy: proxy.url}, async () => {
        await failure(httpFetch('https://gpunet-test.invalid/'))
        assert.deepEqual(proxy.seen, ['CONNECT gpunet-test.invalid:443'])
      }))

    it('goes direct to hosts NO_PROXY names', () =>
      withProxyVariables({HTTP_PROXY: proxy.url, NO_PROXY: 'example.org,.invalid'}, async () => {
        await configureHttp({retry: {maxRetries: 0}})
        const error = await failure(httpFetch('http://gpunet-test.invalid/'))
        assert.match(describeHttpFailure(error), /^(ENOTFOUND|EAI_AGAIN)$/)
        assert.deepEqual(proxy.seen, [])
      }))

    it('never sends loopback requests through the proxy', () =>
      withProxyVariables({HTTP_PROXY: proxy.url, NO_PROXY: ''}, async () => {
        const server = await serve((_req, res) => res.end('direct'))
        assert.equal(await (await httpFetch(`${server.url}/a`)).text(), 'direct')
        assert.equal(await (await httpFetch(`http://localhost:${server.port}/b`)).text(), 'direct')
        assert.deepEqual(proxy.seen, [])
      }))
    it('sends every spelling of loopback direct, and counts no other host as loopback', async () => {
      // Dual-stack on every interface, so each spelling (IPv4, IPv6, mapped, unspecified) can reach it.
      const server = createServer((_req, res) => res.end('direct'))
      server.listen(0, '::')
      await once(server, 'listening')
      const {port} = server.address() as AddressInfo
      try {
        const spellings = ['127.0.0.1', '127.1.2.3', 'localhost', 'localhost.', 'LOCALHOST', 'a.localhost.', '0.0.0.0']
        const v6 = ['[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:2]', '[0:0:0:0:0:0:0:1]', '[::]']
        await withProxyVariables({HTTP_PROXY: proxy.url, NO_PROXY: ''}, async () => {
          for (const host of [...spellings, ...v6]) {
            const answer = await (await httpFetch(`http://${host}:${port}/`)).text()
            assert.equal(answer, 'direct', host)
            assert.equal(await (await httpText(`http://${host}:${port}/`, {method: 'POST'})).text(), 'direct', host)
          }
          assert.deepEqual(proxy.seen, [])
        })
      } finally {
        server.close()
      }
      for (const host of ['10.0.0.1', '[::2]', '[::ffff:10.0.0.1]', 'localhost.example.com', '[2001:db8::1]', '[1::]'])
        assert.equal(isLoopbackHost(new URL(`http://${host}/`).hostname), false, host)
    })
  })

  describe('httpText', () => {
    it('reads a whole answer: status, headers by any case, text; a POST is sent once, a GET again after a 503', async () => {
      let gets = 0
      const server = await serve((req, res) => {
        if (req.method === 'GET' && ++gets === 1) return res.writeHead(503).end('busy')
        res.writeHead(req.method === 'POST' ? 429 : 200, {'retry-after': '7', 'x-two': ['a', 'b']}).end(req.method)
      })
      const posted = await httpText(`${server.url}/rpc?x=1`, {method: 'POST', body: '{}'})
      assert.deepEqual(
        [posted.status, posted.ok, posted.statusText, posted.headers.get('Retry-After'), await posted.text()],
        [429, false, 'Too Many Requests', '7', 'POST'],
      )
      const got = await httpText(`${server.url}/health`, {method: 'GET'})
      assert.deepEqual(
        [got.status, got.ok, got.headers.get('x-two'), got.headers.get('x-none')],
        [200, true, 'a, b', null],
      )
      assert.deepEqual(server.seen, ['POST /rpc?x=1', 'GET /health', 'GET /health'])
    })

    it('never sends loopback requests through the proxy, and others through it', async () => {
      const proxy = await startProxy()
      servers.push(proxy)
      await withProxyVariables({HTTP_PROXY: proxy.url, NO_PROXY: ''}, async () => {
        const server = await serve((_req, res) => res.end('direct'))
        assert.equal(await (await httpText(`${server.url}/a`, {method: 'POST', body: '{}'})).text(), 'direct')
        assert.equal(await (await httpText('http://gpunet-test.invalid/b', {method: 'POST'})).text(), 'via proxy')
        assert.deepEqual(proxy.seen, ['POST http://gpunet-test.invalid/b'])
      })
    })
  })

  it('lets a process exit while a pooled keep-alive connection is open', async () => {
    const server = await serve((_req, res) => res.end('ok'))
    const http = fileURLToPath(new URL('../../../src/lib/http/client.ts', import.meta.url))
    const script = `import {httpFetch} from ${JSON.stringify(http)}
      const response = await httpFetch(${JSON.stringify(server.url)})
      process.stdout.write(await response.text())`
    const started = Date.now()
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk))
    const [code] = (await once(child, 'exit')) as [number]
    assert.equal(code, 0)
    assert.equal(out, 'ok')
    // The server keeps idle connections for 5 s (Node's default); a process held by one would exit after that.
    assert.ok(Date.now() - started < 5000, `exited after ${Date.now() - started} ms`)
  })
})

describe('the global fetch of other libraries in the same process', () => {
  it('still works on Node 20 once gpunet has loaded undici (a request with its own content-length)', async () => {
    const server = createServer((req, res) => {
      req.resume()
      req.on('end', () => res.end('ok'))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const {port} = server.address() as AddressInfo
    // A fresh process: which undici loads first decides, so gpunet's client must be the first thing to load.
    const client = fileURLToPath(new URL('../../../src/lib/ipfs/client.ts', import.meta.url))
    const script = [
      `await import(${JSON.stringify(client)})`,
      'const body = JSON.stringify({jsonrpc: "2.0", id: 1, method: "getHealth"})',
      `const res = await fetch('http://127.0.0.1:${port}/', {method: 'POST', body, headers: {'content-length': String(body.length)}})`,
      'process.stdout.write(await res.text())',
    ].join('\n')
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script])
      let stdout = ''
      let stderr = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
      await once(child, 'close')
      assert.equal(stdout, 'ok', stderr)
    } finally {
      server.close()
    }
  })
})
