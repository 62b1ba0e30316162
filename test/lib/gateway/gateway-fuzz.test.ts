/**
 * The bounded fuzzer (fixed seed, a number of cases) extended to the gateway's replica side (issue 61): a stand-in
 * job service on 127.0.0.1 answers each request that comes through the real gateway with seeded random bytes
 * (mutated status lines, headers, framing, early closes, half-closes, garbage after the body; random answers to
 * upgrades). For each case the gateway (this test's own process: an uncaught error fails the test) must not crash,
 * the client gets a well-formed answer with a status of 100-599 (the gateway's 502 among them) or a closed
 * connection within a bound, and `x-gpunet-gateway` never comes from the service; after the run the gateway still
 * serves a healthy job, and no request through the deployment's stable URL is left counted in flight. Each case's
 * hostility is drawn too (from valid HTTP, passed on, to mostly broken), so both sides of the checks are reached. Hand-written hostile answers are in gateway.test.ts; this varies them at random.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, request, type Server} from 'node:http'
import {
  type AddressInfo,
  connect,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net'

import {GATEWAY_ANSWER_HEADER} from '../../../src/lib/node/gateway-answer.js'
import {Gateway} from '../../../src/lib/gateway/gateway.js'
import {prng} from '../../helpers/eventually.js'

const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'
const GOOD = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin'
const SEED = 0x61_61_61
const REQUESTS = 300
const UPGRADES = 100
/** How long a case may take before the client must have its answer or a closed connection. */
const CASE_BOUND_MS = 3000
/** The gateway's bounds for a silent service and a half-closed tunnel, shortened so that stalls end in the run. */
const ANSWER_TIMEOUT_MS = 300
const HALF_CLOSED_MS = 300
/** What the service puts in the gateway's own header; never seen by a client. */
const FORGED = 'forged-by-the-service'

/** What the service does once it has read a request's head. */
interface Act {
  /** Written in pieces, in order, a moment apart when split. */
  bytes: Buffer[]
  /** After the bytes: end (FIN), reset (RST), half-close (FIN, then still read) or stall (nothing more). */
  then: 'end' | 'reset' | 'half-close' | 'stall'
}

/** A seeded generator of hostile answers. */
function answers(seed: number) {
  const random = prng(seed)
  const int = (n: number) => Math.floor(random() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T
  const chance = (p: number) => random() < p
  /** How hostile the case is: 0 sends only valid HTTP (the answers passed on), 1 and above mostly broken. */
  let rate = 1
  /** A mutation with a chance of `p`, scaled by the case's rate. */
  const bad = (p: number) => random() < p * rate
  const bytes = (n: number) => Buffer.from(Array.from({length: n}, () => int(256)))
  const printable = (n: number) => Array.from({length: n}, () => String.fromCharCode(32 + int(95))).join('')
  /** A string with now and then a control byte, a DEL, a byte past ASCII or a bare CR/LF. */
  const dirty = (n: number) =>
    Array.from({length: n}, () =>
      chance(0.1)
        ? pick(['\x00', '\x01', '\x7f', '\xff', '\r', '\n', '\t', '\x1b'])
        : String.fromCharCode(32 + int(95)),
    ).join('')

  const version = () =>
    !bad(0.2)
      ? 'HTTP/1.1'
      : pick([
          'HTTP/1.1',
          'HTTP/1.1',
          'HTTP/1.1',
          'HTTP/1.0',
          'HTTP/2.0',
          'HTTP/0.9',
          'HTTP/1.x',
          'http/1.1',
          'HTTP',
          '',
        ])
  const code = () =>
    !bad(0.15)
      ? String(pick([100, 101, 103, 200, 204, 206, 301, 304, 400, 404, 500, 502, 503, 599]))
      : pick([String(int(1000)), '000', '099', '600', '999', '2000', '20', '2x0', '+200', '-200', ' 200', ''])
  const reason = () =>
    !bad(0.2) ? pick(['OK', '', 'Whatever', printable(int(40))]) : pick([dirty(int(40)), 'x'.repeat(int(5000))])
  const headerName = (): string =>
    !bad(0.1)
      ? pick([
          'content-type',
          'content-length',
          'transfer-encoding',
          'connection',
          'keep-alive',
          'set-cookie',
          'location',
          'upgrade',
          'trailer',
          'x-custom',
          GATEWAY_ANSWER_HEADER,
          'X-GPUNET-GATEWAY',
        ])
      : pick([printable(1 + int(20)), dirty(1 + int(20)), 'x a', '', ':', 'x-' + 'n'.repeat(int(3000))])
  const headerValue = (name: string) => {
    const lower = name.toLowerCase()
    if (lower === GATEWAY_ANSWER_HEADER) return FORGED
    if (lower === 'content-length') return pick([String(int(100)), '-1', 'abc', '1e3', '99999999999999999999', ''])
    if (lower === 'transfer-encoding') return pick(['chunked', 'gzip, chunked', 'chunked, gzip', 'identity', dirty(8)])
    return !bad(0.15) ? pick(['', 'v', printable(int(60))]) : pick([dirty(int(60)), 'v'.repeat(int(20_000))])
  }
  const eol = () => (!bad(0.01) ? '\r\n' : pick(['\n', '\r', '\r\r\n', '']))

  /** A body framed by chance rightly or wrongly, with now and then garbage after it. */
  const body = (head: string[]) => {
    const content = bytes(int(200))
    const framing = bad(0.5) ? pick(['short', 'long', 'bad-chunks']) : pick(['length', 'length', 'chunked', 'none'])
    let out: Buffer
    if (framing === 'length' || framing === 'short' || framing === 'long') {
      const told = framing === 'length' ? content.length : framing === 'short' ? content.length + 1 + int(50) : 0
      head.push(`content-length: ${told}`)
      out = content
    } else if (framing === 'chunked' || framing === 'bad-chunks') {
      head.push('transfer-encoding: chunked')
      const size = (n: number) =>
        framing === 'chunked' ? n.toString(16) : pick([n.toString(16), 'zz', '-1', 'ffffffffffffffff', '', ' 1'])
      const pieces: Buffer[] = []
      for (let i = 0, at = 0; i < 1 + int(4); i++) {
        const piece = content.subarray(at, (at += int(60)))
        pieces.push(Buffer.from(`${size(piece.length)}\r\n`), piece, Buffer.from('\r\n'))
      }
      if (framing === 'chunked' || chance(0.5)) pieces.push(Buffer.from('0\r\n\r\n'))
      out = Buffer.concat(pieces)
    } else out = content
    if (bad(0.2)) out = Buffer.concat([out, bytes(int(100))])
    return out
  }

  /** An answer to a plain request. */
  const answer = (): Act => {
    let raw: Buffer
    rate = pick([0, 0, 0.3, 1, 2])
    if (bad(0.05)) raw = bytes(int(300))
    else {
      const head = [`${version()} ${code()}${!bad(0.1) ? ' ' : ''}${reason()}`]
      const count = chance(0.1) ? 100 + int(400) : int(8)
      for (let i = 0; i < count; i++) {
        let name = bad(0.3) && head.length > 1 ? head[1 + int(head.length - 1)]!.split(':')[0]! : headerName()
        // The body's framing is set below: a second length or encoding is one of the mutations.
        if (/^(content-length|transfer-encoding)$/i.test(name) && !bad(1)) name = 'x-custom'
        head.push(`${name}:${chance(0.9) ? ' ' : ''}${headerValue(name)}`)
      }
      const payload = body(head)
      raw = Buffer.concat([Buffer.from(head.map((line) => line + eol()).join('') + '\r\n', 'latin1'), payload])
    }
    // Now and then the answer stops part of the way.
    if (bad(0.1)) raw = raw.subarray(0, int(raw.length + 1))
    const bytesOut: Buffer[] = []
    if (chance(0.2)) for (let at = 0; at < raw.length;) bytesOut.push(raw.subarray(at, (at += 1 + int(64))))
    else bytesOut.push(raw)
    const then = chance(0.05) ? 'stall' : pick(['end', 'end', 'reset', 'half-close'] as const)
    return {bytes: bytesOut, then}
  }

  /** An answer to an upgrade: a switch, a refusal, or anything at all, and then frames or garbage. */
  const upgrade = (): Act => {
    rate = pick([0, 0.3, 1, 2])
    const head = [
      bad(0.3)
        ? `${version()} ${code()} ${dirty(int(20))}`
        : pick([
            'HTTP/1.1 101 Switching Protocols',
            'HTTP/1.1 101 Switching Protocols',
            `HTTP/1.1 ${code()} ${reason()}`,
          ]),
    ]
    if (chance(0.7)) head.push('upgrade: websocket', 'connection: Upgrade')
    for (let i = 0, count = chance(0.1) ? 200 + int(300) : int(6); i < count; i++) {
      const name = headerName()
      head.push(`${name}: ${headerValue(name)}`)
    }
    let raw = Buffer.concat([
      Buffer.from(head.map((line) => line + eol()).join('') + '\r\n', 'latin1'),
      bytes(int(200)),
    ])
    if (bad(0.1)) raw = raw.subarray(0, int(raw.length + 1))
    if (bad(0.1)) raw = bytes(int(300))
    const then = chance(0.05) ? 'stall' : pick(['end', 'end', 'reset', 'half-close'] as const)
    return {bytes: [raw], then}
  }

  return {answer, upgrade, int, pick, chance}
}

/** What a client got through the gateway: its answer's status and the gateway header, or null for a closed one. */
interface Got {
  status: number
  gateway?: string
}

/** How long a client reads an answer's body that has not ended: a quiet stream open both ways is not cut. */
const STREAM_READ_MS = 300

/**
 * A plain request through the gateway; resolves with the head of its answer once the body ended, broke off or was
 * read for STREAM_READ_MS, or null when the connection closed before a whole head came.
 */
function plain(port: number, host: string, method: string, body?: string): Promise<Got | null> {
  return new Promise((resolve) => {
    const req = request(
      {host: '127.0.0.1', port, path: '/fuzz', method, headers: {host: `${host}:${port}`}, agent: false},
      (res) => {
        const got = {status: res.statusCode ?? 0, gateway: res.headers[GATEWAY_ANSWER_HEADER] as string | undefined}
        // A service that streams without end (no length, its connection held open) is a stream the gateway
        // passes on as it is: the client stops reading it.
        const timer = setTimeout(() => req.destroy(), STREAM_READ_MS)
        res.on('data', () => {})
        res.on('error', () => {})
        res.on('close', () => {
          clearTimeout(timer)
          resolve(got)
        })
      },
    )
    req.on('error', () => resolve(null))
    req.end(body)
  })
}

/** An upgrade through the gateway, on a raw socket: everything the gateway sent until the connection closed. */
function upgradeThrough(port: number, host: string): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const got: Buffer[] = []
    socket.on('error', () => {})
    socket.on('data', (chunk: Buffer) => {
      // A tunnel open both ways has no idle bound, by design: the client ends its half soon after the answer,
      // and the gateway must then close both within its half-closed bound, whatever the service does.
      if (got.length === 0) setTimeout(() => socket.end(), 20)
      got.push(chunk)
    })
    // The client ends its half once the gateway ended its own, as a browser would.
    socket.on('end', () => socket.end())
    socket.on('close', () => resolve(Buffer.concat(got)))
    socket.write(
      `GET /ws HTTP/1.1\r\nhost: ${host}:${port}\r\nconnection: Upgrade\r\nupgrade: websocket\r\n` +
        'sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    )
  })
}

/** Resolves `promise`, or fails once `ms` has passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer and no close within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, bound])
  } finally {
    clearTimeout(timer)
  }
}

describe("gateway fuzzer: the replica side (a job service's hostile answers)", function () {
  this.timeout(120_000)
  let gateway: Gateway
  let port = 0
  let service: NetServer
  let good: Server
  /** What the service does for the next request head it reads. */
  let next: Act = {bytes: [], then: 'end'}
  const sockets = new Set<Socket>()
  const seen = new Map<string, number>()
  const tally = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1)
  /** The run reached past the gateway's refusals too: some answers passed on, some refused, some cut. */
  const covered = () => {
    const passed = [...seen].filter(([what]) => what !== '502' && what !== 'closed').length
    assert.ok(passed > 0 && (seen.get('502') ?? 0) > 0, `too narrow a run: ${JSON.stringify([...seen])}`)
    seen.clear()
  }

  before(async () => {
    good = createServer((_req, res) => res.end('fine'))
    good.listen(0, '127.0.0.1')
    await once(good, 'listening')
    service = createNetServer((socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {})
      let seen = ''
      let answered = false
      socket.on('data', (chunk: Buffer) => {
        seen += chunk.toString('latin1')
        if (answered || !seen.includes('\r\n\r\n')) return
        // One answer a connection: the gateway does not reuse a connection to a service that broke HTTP.
        answered = true
        void act(socket, next)
      })
    })
    service.listen(0, '127.0.0.1')
    await once(service, 'listening')
    gateway = new Gateway({answerTimeoutMs: ANSWER_TIMEOUT_MS, tunnelHalfClosedMs: HALF_CLOSED_MS})
    port = Number(new URL(await gateway.listen(0)).port)
    gateway.register(JOB, [80])
    gateway.ready(JOB, 80, (service.address() as AddressInfo).port)
    // The stable URL of a deployment whose one replica is the service: its requests are counted in flight.
    gateway.useDeployments({deploymentRoutes: async () => [{job: JOB, ready: true, draining: false}]})
    gateway.register(GOOD, [80])
    gateway.ready(GOOD, 80, (good.address() as AddressInfo).port)
  })

  after(async () => {
    await gateway.close()
    for (const socket of sockets) socket.destroy()
    await new Promise((r) => service.close(r))
    good.closeAllConnections()
    await new Promise((r) => good.close(r))
  })

  /** Plays one act on the service's side of a connection. */
  async function act(socket: Socket, what: Act): Promise<void> {
    for (const [i, piece] of what.bytes.entries()) {
      if (socket.destroyed) return
      if (i > 0) await new Promise((r) => setTimeout(r, 1))
      socket.write(piece)
    }
    if (socket.destroyed) return
    if (what.then === 'end') socket.end()
    else if (what.then === 'reset') socket.resetAndDestroy()
    else if (what.then === 'half-close') socket.end()
    // A stall ends when the gateway gives up (its answer timeout) and closes the connection.
    if (what.then === 'half-close') socket.resume()
  }

  it(`survives ${REQUESTS} seeded hostile answers to plain requests (seed ${SEED.toString(16)})`, async () => {
    const gen = answers(SEED)
    const started = Date.now()
    for (let i = 0; i < REQUESTS; i++) {
      next = gen.answer()
      const method = gen.pick(['GET', 'GET', 'POST', 'HEAD', 'DELETE'])
      const host = gen.pick([`${JOB}.node.localhost`, 'dep1.deploy.localhost'])
      const got = await within(
        plain(port, host, method, method === 'POST' ? 'body' : undefined),
        CASE_BOUND_MS,
        `case ${i}`,
      )
      tally(got === null ? 'closed' : String(got.status))
      if (got === null) continue
      assert.ok(got.status >= 100 && got.status <= 599, `case ${i}: status ${got.status}`)
      assert.notEqual(got.gateway, FORGED, `case ${i}: the service's ${GATEWAY_ANSWER_HEADER} passed on`)
      if (got.gateway !== undefined) assert.equal(got.status, 502, `case ${i}: the gateway's header on a ${got.status}`)
    }
    assert.ok(Date.now() - started < 60_000, 'the run is bounded in time')
    covered()
    // Every request through the stable URL was let go, however its answer went: none is counted in flight still.
    for (let wait = 0; gateway.inFlight(JOB) > 0 && wait < 50; wait++) await new Promise((r) => setTimeout(r, 20))
    assert.equal(gateway.inFlight(JOB), 0, 'requests left counted in flight')
    assert.equal((await plain(port, `${GOOD}.node.localhost`, 'GET'))?.status, 200, 'a healthy job is still served')
  })

  it(`survives ${UPGRADES} seeded hostile answers to upgrades (seed ${(SEED + 1).toString(16)})`, async () => {
    const gen = answers(SEED + 1)
    for (let i = 0; i < UPGRADES; i++) {
      next = gen.upgrade()
      const got = await within(upgradeThrough(port, `${JOB}.node.localhost`), CASE_BOUND_MS, `upgrade ${i}`)
      if (got.length === 0) {
        tally('closed')
        continue
      }
      const text = got.toString('latin1')
      const head = text.slice(0, text.indexOf('\r\n\r\n') >>> 0)
      // The head the gateway passed on is the service's (its header taken out) or the gateway's own 502.
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)
      assert.ok(status, `upgrade ${i}: no status line passed on: ${JSON.stringify(text.slice(0, 40))}`)
      assert.ok(Number(status[1]) >= 100 && Number(status[1]) <= 599, `upgrade ${i}: status ${status[1]}`)
      tally(status[1]!)
      assert.ok(!head.includes(FORGED), `upgrade ${i}: the service's ${GATEWAY_ANSWER_HEADER} passed on`)
    }
    covered()
    assert.equal((await plain(port, `${GOOD}.node.localhost`, 'GET'))?.status, 200, 'a healthy job is still served')
  })

  // Found by the first version of this fuzzer (seed 616162: its upgrades 17, and 4 once the check asked for a
  // status line): the head of a
  // service's answer to an upgrade was passed on as it came, a status of 999 or a line of "HTTP/1.1 +200" too.
  const regressions: [string, string][] = [
    ['status 999 (seed 616162, upgrade 17)', 'HTTP/1.1 999 X\r\nupgrade: websocket\r\n\r\n'],
    ['a status line of "HTTP/1.1 +200" (seed 616162, upgrade 4)', 'HTTP/1.1 +200 \r\nupgrade: websocket\r\n\r\n'],
    ['a header value with a control byte', 'HTTP/1.1 101 Switching\r\nupgrade: web\x01socket\r\n\r\n'],
  ]
  for (const [what, raw] of regressions)
    it(`answers 502 for an upgrade answered with ${what}`, async () => {
      next = {bytes: [Buffer.from(raw, 'latin1')], then: 'stall'}
      const text = (await within(upgradeThrough(port, `${JOB}.node.localhost`), CASE_BOUND_MS, what)).toString('latin1')
      assert.match(text, /^HTTP\/1\.1 502 Bad Gateway\r\n/)
      assert.match(text, new RegExp(`\r\\n${GATEWAY_ANSWER_HEADER}: invalid-answer\r\\n`))
    })
})
