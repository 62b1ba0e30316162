/** The node API's header rules, replay filtering and `--since` (issue 20), each rule shown to refuse on its own. */
import {strict as assert} from 'node:assert'

import {AuthorizationManager} from '@nosana/sdk'
import {Keypair} from '@solana/web3.js'
import bs58 from 'bs58'

import {base58Decoder} from '../../../src/lib/text/base58-text.js'
import {ReplayFilter} from '../../../src/lib/job/logs.js'
import {parseSince} from '../../../src/lib/job/since.js'
import {
  checkHeader,
  clientMessage,
  decodeFrame,
  encodeFrame,
  type HeaderScope,
  nodeApiUrl,
  parseHeader,
  signHeader,
  socketUrl,
} from '../../../src/lib/node-api/protocol.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'

describe('node API protocol', () => {
  const poster = Keypair.generate()
  const wallet = walletFromBytes(poster.secretKey)
  const node = Keypair.generate().publicKey.toBase58()
  const job = Keypair.generate().publicKey.toBase58()
  const now = 1_800_000_000_000
  const scope: HeaderScope = {
    poster: poster.publicKey.toBytes(),
    node,
    job,
    route: '/log',
    timeoutSeconds: 600,
    timePartExpirySeconds: 300,
    nowMs: now,
  }
  const sign = (message: string) => bs58.encode(wallet.sign(Buffer.from(message)))

  it("accepts gpunet's own header for 300 s (or the job's timeout), and only for its node and job", () => {
    assert.deepEqual(
      checkHeader(
        signHeader((m) => wallet.sign(m), {action: 'read', node, job}, now),
        scope,
      ),
      {ok: true, lasting: false},
    )
    // Within the time part's 300 s and the job's 600 s.
    const young = signHeader((m) => wallet.sign(m), {action: 'read', node, job}, now - 299_000)
    assert.equal(checkHeader(young, scope).ok, true)
    const stale = signHeader((m) => wallet.sign(m), {action: 'read', node, job}, now - 300_000)
    assert.deepEqual(checkHeader(stale, scope), {ok: false, reason: 'the header has expired'})
    // Without the time part, the signed time still bounds it: 300 s, or the job's timeout when shorter.
    const old = clientMessage('read', node, job, now - 300_000)
    assert.deepEqual(checkHeader(`${old}:${sign(old)}`, scope), {ok: false, reason: 'the header is older than 300 s'})
    const lived = clientMessage('read', node, job, now - 299_000)
    assert.equal(checkHeader(`${lived}:${sign(lived)}`, scope).ok, true)
    const short = clientMessage('read', node, job, now - 60_000)
    assert.deepEqual(checkHeader(`${short}:${sign(short)}`, {...scope, timeoutSeconds: 60}), {
      ok: false,
      reason: 'the header is older than 60 s',
    })
    assert.equal(clientMessage('stop', 'N', 'J', 5), 'gpunet-node-api action=stop node=N job=J at=5')
    for (const malformed of [
      `gpunet-node-api action=read node=${node} job=${job}`,
      `gpunet-node-api node=${node} job=${job} at=${now}`,
      `gpunet-node-api action=read node=${node} job=${job} at=${now} x=1`,
    ]) {
      assert.deepEqual(checkHeader(`${malformed}:${sign(malformed)}`, scope), {
        ok: false,
        reason: "the signed message is not in gpunet's form",
      })
    }
    const noTime = `gpunet-node-api action=read node=${node} job=${job} at=later`
    assert.deepEqual(checkHeader(`${noTime}:${sign(noTime)}`, scope), {
      ok: false,
      reason: 'the signed message has no time',
    })
    for (const [n, j] of [
      [Keypair.generate().publicKey.toBase58(), job],
      [node, Keypair.generate().publicKey.toBase58()],
    ]) {
      const other = clientMessage('read', n!, j!, now)
      assert.deepEqual(checkHeader(`${other}:${sign(other)}`, scope), {
        ok: false,
        reason: 'the header was signed for another node or job',
      })
    }
  })

  it("accepts the network CLI's header as the network does: lasting without a time part", async () => {
    const header = await new AuthorizationManager([...poster.secretKey]).generate('Hello Nosana Node!')
    assert.deepEqual(checkHeader(header, scope), {ok: true, lasting: true})
    const timed = await new AuthorizationManager([...poster.secretKey]).generate('Hello Nosana Node!', {
      includeTime: true,
    })
    assert.deepEqual(checkHeader(timed, {...scope, nowMs: Date.now()}), {ok: true, lasting: false})
    // The network's SDK accepts gpunet's header too.
    const ours = signHeader((m) => wallet.sign(m), {action: 'read', node, job})
    assert.equal(new AuthorizationManager([...poster.secretKey]).validate(ours, {publicKey: poster.publicKey}), true)
  })

  it('refuses every malformed or foreign header', () => {
    const message = 'Hello Nosana Node!'
    const cases: [unknown, string][] = [
      [undefined, 'no authorization header'],
      ['', 'no authorization header'],
      [42, 'no authorization header'],
      [message, 'the header is not <message>:<signature>[:<unix ms>]'],
      [`${message}:${sign(message)}:1:2`, 'the header is not <message>:<signature>[:<unix ms>]'],
      [`${message}:0OIl`, 'the signature is not base58'],
      [`Other:${sign(message)}`, "the signature is not the job poster's over the message"],
      [`${message}:${'z'.repeat(89)}`, 'the signature is not base58'],
      [
        `${message}:${bs58.encode(walletFromBytes(Keypair.generate().secretKey).sign(Buffer.from(message)))}`,
        "the signature is not the job poster's over the message",
      ],
      [`${message}:${sign(message)}:soon`, 'the time part is not a time in unix milliseconds'],
      [`${message}:${sign(message)}:${now + 61_000}`, 'the time part is not a time in unix milliseconds'],
    ]
    for (const [header, reason] of cases)
      assert.deepEqual(checkHeader(header, scope), {ok: false, reason}, String(header))
    assert.equal(checkHeader(`${message}:${sign(message)}:${now + 60_000}`, scope).ok, true, 'the skew bound itself')
    for (const time of [`x${now}`, `${now}x`])
      assert.deepEqual(checkHeader(`${message}:${sign(message)}:${time}`, scope), {
        ok: false,
        reason: 'the time part is not a time in unix milliseconds',
      })
  })

  it("gpunet's header opens only the routes of the action it names", () => {
    const read = signHeader((m) => wallet.sign(m), {action: 'read', node, job}, now)
    const stop = signHeader((m) => wallet.sign(m), {action: 'stop', node, job}, now)
    for (const route of ['/flog', '/log', '/status', 'info', 'endpoints', 'results'] as const) {
      assert.deepEqual(checkHeader(read, {...scope, route}), {ok: true, lasting: false}, route)
      assert.deepEqual(checkHeader(stop, {...scope, route}), {
        ok: false,
        reason: 'the header was signed for stop, not read',
      })
    }
    assert.deepEqual(checkHeader(read, {...scope, route: 'stop'}), {
      ok: false,
      reason: 'the header was signed for read, not stop',
    })
    assert.deepEqual(checkHeader(stop, {...scope, route: 'stop'}), {ok: true, lasting: false})
    for (const action of ['restart', 'exec', 'write'])
      assert.equal(checkHeader(`${action}:${sign(action)}`, {...scope, route: 'stop'}).ok, false)
  })

  it("the network CLI's message opens only the routes that CLI calls with it, in the form it sends there", async () => {
    const manager = new AuthorizationManager([...poster.secretKey])
    const lasting = await manager.generate('Hello Nosana Node!')
    const timed = await manager.generate('Hello Nosana Node!', {includeTime: true})
    const live = {...scope, nowMs: Date.now()}
    const opens = (header: string, route: HeaderScope['route']) => checkHeader(header, {...live, route}).ok
    assert.deepEqual(
      (['/flog', '/log', '/status', 'info', 'endpoints', 'results', 'stop'] as const).map((route) => [
        route,
        opens(lasting, route),
        opens(timed, route),
      ]),
      [
        ['/flog', false, false],
        ['/log', true, true],
        ['/status', false, false],
        ['info', false, false],
        ['endpoints', false, true],
        ['results', false, false],
        ['stop', true, true],
      ],
    )
  })

  it('no secrets-login signature opens any route, with or without a time part appended', () => {
    const login = Math.floor(now / 1000)
    const messages = [
      `service_secret_${login}`,
      `nosana_secret_${login}`,
      `gpunet_secret_127.0.0.1_8899_${login}`,
      'Hello Nosana Node',
      'Hello Nosana Node!!',
      `gpunet-node-api node=${node} job=${job} at=${now}`,
    ]
    for (const message of messages) {
      for (const route of ['/flog', '/log', '/status', 'info', 'endpoints', 'results', 'stop'] as const) {
        for (const header of [`${message}:${sign(message)}`, `${message}:${sign(message)}:${now}`]) {
          assert.equal(checkHeader(header, {...scope, route}).ok, false, `${header} on ${route}`)
        }
      }
    }
  })

  it('refuses a signature too long to be one before decoding it (spy on the one decoder)', () => {
    const calls: number[] = []
    const decode = base58Decoder.decode
    base58Decoder.decode = (text) => {
      calls.push(text.length)
      return decode(text)
    }
    try {
      const message = 'Hello Nosana Node!'
      for (const signature of ['z'.repeat(60_000), '1'.repeat(89), `${sign(message)}0`]) {
        const header = `${message}:${signature}`
        assert.deepEqual(parseHeader(header), {reason: 'the signature is not base58'})
        assert.deepEqual(checkHeader(header, scope), {ok: false, reason: 'the signature is not base58'})
      }
      assert.deepEqual(calls, [])
      assert.equal(checkHeader(`${message}:${sign(message)}`, scope).ok, true)
      assert.equal(calls.length, 1, 'a well-formed signature goes through the same decoder')
    } finally {
      base58Decoder.decode = decode
    }
  })

  it('frames carry JSON inside a string, and anything else decodes to null', () => {
    const text = encodeFrame('flog', {opId: 'a', message: 'x'})
    assert.deepEqual(JSON.parse(text), {path: 'flog', data: '{"opId":"a","message":"x"}'})
    assert.deepEqual(decodeFrame(text), {path: 'flog', data: {opId: 'a', message: 'x'}})
    for (const bad of [
      'nope',
      'null',
      '7',
      '{"path":1,"data":"{}"}',
      '{"path":"flog","data":{}}',
      '{"path":"flog","data":"{"}',
    ])
      assert.equal(decodeFrame(bad), null)
  })

  it('places a node API at its template or under the network host', () => {
    assert.equal(nodeApiUrl('N1', {networkHost: 'k8s.dev.nos.ci'}), 'https://N1.node.k8s.dev.nos.ci')
    assert.equal(
      nodeApiUrl('N1', {template: 'http://{node}.node.localhost:9/', networkHost: 'x'}),
      'http://N1.node.localhost:9',
    )
    assert.equal(nodeApiUrl('N1', {template: 'http://127.0.0.1:9//'}), 'http://127.0.0.1:9')
    assert.equal(nodeApiUrl('N1', {}), null)
    assert.equal(socketUrl('https://n.node.k8s.prd.nos.ci'), 'wss://n.node.k8s.prd.nos.ci')
    assert.equal(socketUrl('http://http.localhost:1'), 'ws://http.localhost:1')
  })
})

describe('replay filter', () => {
  it('drops numbered entries seen before, whatever their times', () => {
    const filter = new ReplayFilter()
    const seen = (seq: number) => filter.replayed({seq, timestamp: 0})
    assert.deepEqual([1, 2, 3].map(seen), [false, false, false])
    filter.reconnected()
    assert.deepEqual([1, 2, 3, 4].map(seen), [true, true, true, false])
  })

  it('without numbers, drops entries at or before the last time, counting entries of the same millisecond', () => {
    const filter = new ReplayFilter()
    const seen = (timestamp: number) => filter.replayed({timestamp})
    assert.deepEqual([10, 20, 20, 30, 30].map(seen), [false, false, false, false, false])
    filter.reconnected()
    // The replay: everything up to the two entries at 30 was printed; a third at 30 is new.
    assert.deepEqual([10, 20, 20, 30, 30, 30, 40].map(seen), [true, true, true, true, true, false, false])
  })
})

describe('--since', () => {
  const now = Date.parse('2026-11-25T12:00:00Z')
  it('takes durations and times', () => {
    assert.equal(parseSince('90s', now), now - 90_000)
    assert.equal(parseSince('1h30m', now), now - 5_400_000)
    assert.equal(parseSince('2d', now), now - 172_800_000)
    assert.equal(parseSince('250ms', now), now - 250)
    assert.equal(parseSince('2026-11-25T10:00:00Z', now), Date.parse('2026-11-25T10:00:00Z'))
  })
  it('refuses anything else with exit 2', () => {
    for (const bad of ['', '5', 'm5', '1 h', 'yesterday', '2026-13-45'])
      assert.throws(
        () => parseSince(bad, now),
        (e: {code: string; exitCode: number}) => e.code === 'invalid_since' && e.exitCode === 2,
        bad,
      )
  })
})
