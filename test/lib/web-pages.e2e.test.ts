/**
 * Web pages can't reach the loopback services (issue 22): the localnet's RPC, WebSocket and gateway and the
 * secrets service refuse a foreign Host (DNS rebinding) and a browser Origin that is not allowed, JSON-RPC takes
 * only JSON, the gateway refuses two Hosts and caps connections, and a job's own page still works through it.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {connect} from 'node:net'

import WebSocket from 'ws'

import {ALLOW_ORIGIN_ENV, isJsonContentType} from '../../src/lib/http/loopback-guard.js'
import {Gateway, MAX_GATEWAY_CONNECTIONS} from '../../src/lib/gateway/gateway.js'
import {cliSandbox, spawnForegroundLocalnet} from '../helpers/cli-localnet.js'
import {useLocalnet} from '../helpers/localnet.js'
import {sqliteAdapter, startService} from '../helpers/secrets.js'

const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'
const HEALTH = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}'

/** One raw HTTP/1.1 request (headers exactly as given, Host included); the status and body it gets. */
async function raw(
  port: number,
  options: {method?: string; path?: string; headers: [string, string][]; body?: string},
): Promise<{status: number; body: string}> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const body = options.body ?? ''
  const head = [
    `${options.method ?? 'GET'} ${options.path ?? '/'} HTTP/1.1`,
    ...options.headers.map(([name, value]) => `${name}: ${value}`),
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ]
  socket.write(`${head.join('\r\n')}\r\n\r\n${body}`)
  let received = ''
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk))
  await once(socket, 'close')
  const at = received.indexOf('\r\n\r\n')
  const headers = received.slice(0, at).toLowerCase()
  let rest = received.slice(at + 4)
  if (headers.includes('transfer-encoding: chunked')) {
    let text = ''
    for (let size = parseInt(rest, 16); size > 0; size = parseInt(rest, 16)) {
      const start = rest.indexOf('\r\n') + 2
      text += rest.slice(start, start + size)
      rest = rest.slice(start + size + 2)
    }
    rest = text
  }
  return {status: Number(headers.split(' ')[1]), body: rest}
}

/** The headers of a JSON-RPC call as a script sends it, with `extra` replacing or adding some. */
function rpcHeaders(port: number, extra: [string, string][] = []): [string, string][] {
  return merged(
    [
      ['host', `127.0.0.1:${port}`],
      ['content-type', 'application/json'],
    ],
    extra,
  )
}

/** `base` with each of `extra` replacing the header of its name, or added. */
function merged(base: [string, string][], extra: [string, string][]): [string, string][] {
  const headers = [...base]
  for (const [name, value] of extra) {
    const at = headers.findIndex(([n]) => n === name)
    if (at >= 0) headers[at] = [name, value]
    else headers.push([name, value])
  }
  return headers
}

describe('web pages and loopback services', function () {
  this.timeout(60_000)

  describe('the localnet RPC and WebSocket', () => {
    const t = useLocalnet()
    const port = () => Number(new URL(t.ln.runtime.rpcUrl).port)
    const post = (extra: [string, string][] = []) =>
      raw(port(), {method: 'POST', headers: rpcHeaders(port(), extra), body: HEALTH})

    it('answers a script (no Origin, a loopback Host, JSON with or without a charset)', async () => {
      for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`]) {
        assert.equal((await post([['host', host]])).status, 200)
      }
      const answer = await post([['content-type', 'application/json; charset=utf-8']])
      assert.deepEqual(JSON.parse(answer.body), {jsonrpc: '2.0', result: 'ok', id: 1})
    })

    it('refuses a foreign Host, a foreign Origin, two Hosts and bodies that are not JSON', async () => {
      const host = await post([['host', `evil.example:${port()}`]])
      assert.equal(host.status, 403)
      assert.match(JSON.parse(host.body).error, /does not serve the host name "evil.example"/)
      const origin = await post([['origin', 'https://evil.example']])
      assert.equal(origin.status, 403)
      assert.match(
        JSON.parse(origin.body).error,
        /web page at "https:\/\/evil.example" are refused.*GPUNET_ALLOW_ORIGIN/,
      )
      const twoHosts = await raw(port(), {
        method: 'POST',
        headers: [...rpcHeaders(port()), ['host', 'evil.example']],
        body: HEALTH,
      })
      assert.equal(twoHosts.status, 400)
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
        const answer = await post([['content-type', type]])
        assert.equal(answer.status, 415, type)
        assert.equal(JSON.parse(answer.body).error.code, -32600)
      }
    })

    it('compares whole origins: its own is served, a look-alike that starts with it is refused (issue 42)', async () => {
      const own = `http://127.0.0.1:${port()}`
      assert.equal((await post([['origin', own]])).status, 200)
      for (const lookalike of [
        `${own}.evil.example`,
        `${own}0`,
        `${own}@evil.example`,
        `http://127.0.0.1`,
        `https://127.0.0.1:${port()}`,
        `http://localhost:${port()}`,
        `null`,
      ]) {
        assert.equal((await post([['origin', lookalike]])).status, 403, lookalike)
      }
    })

    it('allows the origins GPUNET_ALLOW_ORIGIN lists, and none other', async () => {
      // The allowOrigin setting, as a user sets it: the variable of the command that starts the localnet.
      const box = cliSandbox()
      const {child, status} = await spawnForegroundLocalnet(box.dataDir, {
        ...box.env,
        [ALLOW_ORIGIN_ENV]: 'http://localhost:3000, https://app.example',
      })
      try {
        const allowed = Number(new URL(status.rpcUrl!).port)
        const at = (extra: [string, string][]) =>
          raw(allowed, {method: 'POST', headers: rpcHeaders(allowed, extra), body: HEALTH})
        assert.equal((await at([['origin', 'https://app.example']])).status, 200)
        assert.equal((await at([['origin', 'http://localhost:3000']])).status, 200)
        assert.equal((await at([['origin', 'https://evil.example']])).status, 403)
        assert.equal((await at([['origin', 'https://app.example.evil.example']])).status, 403)
        assert.equal((await at([['origin', 'http://localhost:30000']])).status, 403)
        assert.equal((await post([['origin', 'https://app.example']])).status, 403, 'a localnet without it')
      } finally {
        child.kill('SIGTERM')
        await once(child, 'exit')
        await box.cleanup()
      }
    })

    it('refuses a WebSocket upgrade from a foreign Origin or Host, and takes a script', async () => {
      const wsPort = Number(new URL(t.ln.runtime.wsUrl).port)
      const upgrade = (extra: [string, string][]) =>
        raw(wsPort, {
          headers: merged(
            [
              ['host', `127.0.0.1:${wsPort}`],
              ['connection', 'upgrade'],
              ['upgrade', 'websocket'],
              ['sec-websocket-version', '13'],
              ['sec-websocket-key', 'dGhlIHNhbXBsZSBub25jZQ=='],
            ],
            extra,
          ),
        })
      assert.equal((await upgrade([['origin', 'https://evil.example']])).status, 403)
      assert.equal((await upgrade([['host', `evil.example:${wsPort}`]])).status, 403)
      const script = new WebSocket(t.ln.runtime.wsUrl)
      await once(script, 'open')
      script.close()
    })
  })

  describe('the secrets service on 127.0.0.1', () => {
    it('refuses a foreign Host and Origin, and answers a script', async () => {
      const s = await startService(sqliteAdapter)
      try {
        const port = Number(new URL(s.url).port)
        const get = (headers: [string, string][]) => raw(port, {path: '/health', headers})
        const fine = await get([['host', `127.0.0.1:${port}`]])
        assert.equal(fine.status, 200)
        const host = await get([['host', 'evil.example']])
        assert.equal(host.status, 403)
        assert.equal(JSON.parse(host.body).error.code, 'refused')
        const origin = await get([
          ['host', `127.0.0.1:${port}`],
          ['origin', 'https://evil.example'],
        ])
        assert.equal(origin.status, 403)
        assert.match(JSON.parse(origin.body).error.message, /evil\.example/)
        const own = `http://127.0.0.1:${port}`
        assert.equal(
          (
            await get([
              ['host', `127.0.0.1:${port}`],
              ['origin', own],
            ])
          ).status,
          200,
        )
        const lookalike = await get([
          ['host', `127.0.0.1:${port}`],
          ['origin', `${own}.evil.example`],
        ])
        assert.equal(lookalike.status, 403, 'a look-alike of its own origin')
      } finally {
        await s.stop()
      }
    })
  })

  describe('the node gateway', () => {
    let gateway: Gateway
    let upstream: Server
    let port: number

    before(async () => {
      upstream = createServer((req, res) => res.end(`page ${req.method} ${req.url}`))
      upstream.listen(0, '127.0.0.1')
      await once(upstream, 'listening')
      gateway = new Gateway()
      await gateway.listen(0)
      port = Number(new URL(gateway.url).port)
      gateway.register(JOB, [80])
      gateway.ready(JOB, 80, (upstream.address() as AddressInfo).port)
    })
    after(async () => {
      await gateway.close()
      upstream.closeAllConnections()
      await new Promise((r) => upstream.close(r))
    })

    const jobHost = () => `${JOB.toLowerCase()}.node.localhost:${port}`

    it("serves a job's own page and the requests it makes to itself (same origin)", async () => {
      const page = await raw(port, {path: '/index.html', headers: [['host', jobHost()]]})
      assert.deepEqual(page, {status: 200, body: 'page GET /index.html'})
      const call = await raw(port, {
        method: 'POST',
        path: '/api',
        headers: [
          ['host', jobHost()],
          ['origin', `http://${jobHost()}`],
        ],
      })
      assert.deepEqual(call, {status: 200, body: 'page POST /api'})
    })

    it('refuses a foreign Origin, a foreign Host and two Hosts', async () => {
      const origin = await raw(port, {
        headers: [
          ['host', jobHost()],
          ['origin', 'https://evil.example'],
        ],
      })
      assert.equal(origin.status, 403)
      assert.equal(JSON.parse(origin.body).error, 'refused')
      assert.equal((await raw(port, {headers: [['host', `evil.example:${port}`]]})).status, 403)
      const two = await raw(port, {
        headers: [
          ['host', jobHost()],
          ['host', `evil.example:${port}`],
        ],
      })
      assert.equal(two.status, 400)
      assert.match(JSON.parse(two.body).message, /exactly one Host/)
    })

    it('caps its connections', () => {
      assert.equal((gateway as unknown as {server: Server}).server.maxConnections, MAX_GATEWAY_CONNECTIONS)
    })
  })

  it('takes application/json with a UTF-8 charset as JSON, and nothing else', () => {
    for (const type of [
      'application/json',
      'Application/JSON',
      'application/json; charset=utf-8',
      'application/json;charset="UTF-8"',
    ])
      assert.equal(isJsonContentType(type), true, type)
    for (const type of [
      undefined,
      '',
      'text/plain',
      'application/json; charset=latin1',
      'application/jsonx',
      'application/json; x=1',
    ])
      assert.equal(isJsonContentType(type), false, String(type))
  })
})
