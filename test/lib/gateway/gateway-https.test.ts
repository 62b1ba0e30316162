/**
 * The gateway's https side: a real Gateway on 127.0.0.1 with a certificate of the localnet's own authority (made in a
 * temp folder), requested by clients that trust that authority alone (`ca` on the request), names resolved to
 * 127.0.0.1 by the client. A stranger's handshake that never finishes is closed within its bound.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {statSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import {type AddressInfo, connect, type Socket} from 'node:net'
import {connect as tlsConnect} from 'node:tls'
import {setTimeout as sleep} from 'node:timers/promises'

import 'reflect-metadata'
import {webcrypto} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {createServer as createTlsServer} from 'node:tls'

import * as x509 from '@peculiar/x509'
import WebSocket, {WebSocketServer} from 'ws'

import {GATEWAY_HANDSHAKE_TIMEOUT_MS, GATEWAY_HEADERS_TIMEOUT_MS, Gateway} from '../../../src/lib/gateway/gateway.js'
import {
  ensureGatewayCertificate,
  GATEWAY_CERTIFICATE_NAMES,
  type GatewayCertificate,
} from '../../../src/lib/localnet/nodes/certificates.js'
import {localnetTlsFiles} from '../../../src/lib/localnet/paths.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {httpsGet, loopbackLookup} from '../../helpers/https.js'

const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'
const OTHER = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin'

/** Waits until `done` holds or `ms` pass; returns whether it held. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (!done() && Date.now() < end) await sleep(20)
  return done()
}

/** A TCP connection to the https port that sends nothing: a handshake that never begins. */
async function stalled(port: number): Promise<{socket: Socket; closedAt: () => number | null}> {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  let closedAt: number | null = null
  socket.on('close', () => (closedAt = Date.now()))
  await once(socket, 'connect')
  return {socket, closedAt: () => closedAt}
}

describe('gateway https: the localnet authority', () => {
  let dir: string
  beforeEach(() => (dir = tempDir()))
  afterEach(() => removeDir(dir))

  it('is made once and kept (key 0600); the server certificate names every level the gateway serves', async () => {
    const first = await ensureGatewayCertificate(dir)
    assert.deepEqual(first.made, {ca: true, cert: true})
    const files = localnetTlsFiles(dir)
    assert.equal(first.caFile, files.caCert)
    assert.equal(statSync(files.caKey).mode & 0o777, 0o600)
    assert.equal(statSync(files.key).mode & 0o777, 0o600)
    const again = await ensureGatewayCertificate(dir)
    assert.deepEqual(again.made, {ca: false, cert: false})
    assert.equal(again.ca, first.ca)
    assert.equal(again.cert, first.cert)
    // A wildcard covers one label: one for each level.
    assert.deepEqual(
      [...GATEWAY_CERTIFICATE_NAMES.dns].sort(),
      ['*.deploy.localhost', '*.node.localhost', 'localhost', 'node.localhost'].sort(),
    )
  })

  it('makes the server certificate again near its end, under the same authority', async () => {
    const first = await ensureGatewayCertificate(dir)
    const late = new Date(first.notAfter.getTime() - 10 * 86_400_000)
    const renewed = await ensureGatewayCertificate(dir, late)
    assert.deepEqual(renewed.made, {ca: false, cert: true})
    assert.equal(renewed.ca, first.ca)
    assert.notEqual(renewed.cert, first.cert)
  })

  it('is trusted for the loopback only: a certificate it signs for another name is refused', async () => {
    const {ca} = await ensureGatewayCertificate(dir)
    const files = localnetTlsFiles(dir)
    const alg = {name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256'}
    x509.cryptoProvider.set(webcrypto as Crypto)
    const caKey = await webcrypto.subtle.importKey(
      'pkcs8',
      x509.PemConverter.decodeFirst(readFileSync(files.caKey, 'utf8')),
      alg,
      false,
      ['sign'],
    )
    const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair
    // Whoever reads the authority's key signs a certificate for another site with it.
    const forged = await x509.X509CertificateGenerator.create({
      subject: 'CN=bank.example',
      issuer: new x509.X509Certificate(ca).subject,
      notBefore: new Date(Date.now() - 86_400_000),
      notAfter: new Date(Date.now() + 86_400_000),
      publicKey: keys.publicKey,
      signingKey: caKey,
      signingAlgorithm: alg,
      extensions: [new x509.SubjectAlternativeNameExtension([{type: 'dns', value: 'bank.example'}])],
    })
    const key = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY')
    const server = createTlsServer({key, cert: forged.toString('pem')}, (socket) => socket.end())
    server.on('tlsClientError', () => {})
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      const port = (server.address() as AddressInfo).port
      const socket = tlsConnect({port, host: '127.0.0.1', servername: 'bank.example', ca})
      const [error] = (await once(socket, 'error')) as [NodeJS.ErrnoException]
      // OpenSSL's X509_V_ERR_PERMITTED_VIOLATION, which Node gives no code of its own.
      assert.equal(error.message, 'permitted subtree violation')
    } finally {
      server.close()
    }
  })

  it('makes a new authority (and certificate) when its files are gone', async () => {
    const first = await ensureGatewayCertificate(dir)
    removeDir(localnetTlsFiles(dir).caKey)
    const again = await ensureGatewayCertificate(dir)
    assert.deepEqual(again.made, {ca: true, cert: true})
    assert.notEqual(again.ca, first.ca)
  })
})

describe('gateway https: what it serves', function () {
  this.timeout(15_000)
  let dir: string
  let certificate: GatewayCertificate
  let gateway: Gateway
  let upstream: Server
  let base: string

  before(async () => {
    dir = tempDir()
    certificate = await ensureGatewayCertificate(dir)
    upstream = createServer((req, res) => res.end(`${req.method} ${req.url} from ${req.headers.host}`))
    const wss = new WebSocketServer({server: upstream})
    wss.on('connection', (ws) => ws.on('message', (data: Buffer) => ws.send(`echo:${data.toString()}`)))
    upstream.listen(0, '127.0.0.1')
    await once(upstream, 'listening')
    const port = (upstream.address() as AddressInfo).port
    gateway = new Gateway()
    await gateway.listen(0)
    base = await gateway.listenHttps(0, certificate)
    gateway.register(JOB, [80])
    gateway.ready(JOB, 80, port)
    gateway.useDeployments({deploymentRoutes: async () => [{job: JOB, ready: true, draining: false}]})
  })

  after(async () => {
    await gateway.close()
    upstream.closeAllConnections()
    await new Promise((r) => upstream.close(r))
    removeDir(dir)
  })

  const at = (name: string, path = '/x') => `https://${name}.node.localhost:${new URL(base).port}${path}`

  it('serves https on its own port beside http', () => {
    assert.match(base, /^https:\/\/node\.localhost:\d+$/)
    assert.equal(gateway.httpsUrl, base)
    assert.notEqual(new URL(base).port, new URL(gateway.url).port)
  })

  it("serves a job's port at <job>.node.localhost and <job>-<port>.node.localhost to a client trusting the CA", async () => {
    const port = new URL(base).port
    assert.deepEqual(await httpsGet(at(JOB), certificate.ca), {
      status: 200,
      // The client writes the Host in lower case (WHATWG URL); the gateway routes it whatever its case.
      body: `GET /x from ${JOB.toLowerCase()}.node.localhost:${port}`,
      gateway: undefined,
    })
    const byPort = await httpsGet(at(`${JOB}-80`), certificate.ca)
    assert.equal('status' in byPort && byPort.status, 200)
  })

  it("serves a deployment's stable URL at <deployment>.deploy.localhost", async () => {
    const url = `https://dep1.deploy.localhost:${new URL(base).port}/y`
    const answer = await httpsGet(url, certificate.ca)
    assert.equal('status' in answer && answer.status, 200, JSON.stringify(answer))
    assert.match('body' in answer ? answer.body : '', /^GET \/y from dep1\.deploy\.localhost/)
  })

  it("answers the gateway's own pages over https as over http (an unknown job: 404 not-ready)", async () => {
    const answer = await httpsGet(at(OTHER), certificate.ca)
    assert.deepEqual('status' in answer && [answer.status, answer.gateway], [404, 'not-ready'])
  })

  it('refuses a client that does not trust the authority (certificate verification fails)', async () => {
    const answer = await httpsGet(at(JOB))
    assert.ok('error' in answer, JSON.stringify(answer))
    assert.equal(answer.error, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE')
  })

  it('passes a websocket upgrade through over https (wss)', async () => {
    const ws = new WebSocket(at(JOB, '/').replace(/^https/, 'wss'), {ca: certificate.ca, lookup: loopbackLookup})
    try {
      await once(ws, 'open')
      ws.send('hi')
      const [data] = (await once(ws, 'message')) as [Buffer]
      assert.equal(data.toString(), 'echo:hi')
    } finally {
      ws.terminate()
    }
  })

  it("takes a page's https origin as its own origin, and refuses another page's", async () => {
    const port = new URL(base).port
    const ask = (origin: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = tlsConnect({
          port: Number(port),
          host: '127.0.0.1',
          servername: `${JOB}.node.localhost`,
          ca: certificate.ca,
        })
        socket.on('error', reject)
        let got = ''
        socket.on('data', (chunk: Buffer) => {
          got += chunk.toString('latin1')
          const status = /^HTTP\/1\.1 (\d+)/.exec(got)
          if (status) {
            socket.destroy()
            resolve(Number(status[1]))
          }
        })
        socket.write(`GET / HTTP/1.1\r\nhost: ${JOB}.node.localhost:${port}\r\norigin: ${origin}\r\n\r\n`)
      })
    // Browsers send an origin's host in lower case.
    assert.equal(await ask(`https://${JOB.toLowerCase()}.node.localhost:${port}`), 200)
    assert.equal(await ask(`http://evil.example`), 403)
  })
})

describe('gateway https: a renewed certificate', function () {
  this.timeout(15_000)

  it('serves new connections with it, under the same authority', async () => {
    const dir = tempDir()
    const gateway = new Gateway()
    try {
      const first = await ensureGatewayCertificate(dir)
      await gateway.listen(0)
      const port = Number(new URL(await gateway.listenHttps(0, first)).port)
      const served = async () => {
        const socket = tlsConnect({port, host: '127.0.0.1', servername: 'node.localhost', ca: first.ca})
        await once(socket, 'secureConnect')
        const serial = socket.getPeerCertificate().serialNumber
        socket.destroy()
        return serial
      }
      const before = await served()
      // Made again (its key gone), at the real time: one made for a later day would not be valid yet.
      removeDir(localnetTlsFiles(dir).key)
      const renewed = await ensureGatewayCertificate(dir)
      assert.deepEqual(renewed.made, {ca: false, cert: true})
      gateway.renewCertificate(renewed)
      const after = await served()
      assert.notEqual(after, before)
      assert.equal(renewed.ca, first.ca)
    } finally {
      await gateway.close()
      removeDir(dir)
    }
  })
})

describe('gateway https: bounds', function () {
  this.timeout(15_000)
  let dir: string
  let certificate: GatewayCertificate

  before(async () => {
    dir = tempDir()
    certificate = await ensureGatewayCertificate(dir)
  })
  after(() => removeDir(dir))

  it('bounds a handshake as the http side bounds its headers', () => {
    assert.ok(GATEWAY_HANDSHAKE_TIMEOUT_MS > 0 && GATEWAY_HANDSHAKE_TIMEOUT_MS <= GATEWAY_HEADERS_TIMEOUT_MS)
    const gateway = new Gateway()
    assert.equal(Reflect.get(gateway, 'handshakeTimeoutMs'), GATEWAY_HANDSHAKE_TIMEOUT_MS)
  })

  it('closes a stalled handshake within its bound, and a half-sent one', async () => {
    const gateway = new Gateway({handshakeTimeoutMs: 300})
    await gateway.listen(0)
    const port = Number(new URL(await gateway.listenHttps(0, certificate)).port)
    try {
      const started = Date.now()
      const silent = await stalled(port)
      const partial = await stalled(port)
      // The first bytes of a ClientHello's record header, and no more.
      partial.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02]))
      assert.ok(await until(() => silent.closedAt() !== null && partial.closedAt() !== null, 3000), 'both closed')
      for (const one of [silent, partial]) {
        const after = one.closedAt()! - started
        assert.ok(after >= 250 && after < 2000, `closed after ${after} ms`)
      }
    } finally {
      await gateway.close()
    }
  })

  it("counts handshakes under way against their source's cap, and still answers a client", async () => {
    const gateway = new Gateway({maxConnectionsPerSource: 4, handshakeTimeoutMs: 10_000})
    await gateway.listen(0)
    const base = await gateway.listenHttps(0, certificate)
    const port = Number(new URL(base).port)
    const strangers: Awaited<ReturnType<typeof stalled>>[] = []
    try {
      for (let i = 0; i < 10; i++) strangers.push(await stalled(port))
      // Each new one past the cap closes the oldest idle one: a handshake under way is idle.
      assert.ok(await until(() => strangers.filter((s) => s.closedAt() === null).length <= 4, 2000))
      const answer = await httpsGet(`https://${JOB}.node.localhost:${port}/`, certificate.ca)
      assert.deepEqual('status' in answer && [answer.status, answer.gateway], [404, 'not-ready'])
    } finally {
      for (const stranger of strangers) stranger.socket.destroy()
      await gateway.close()
    }
  })
})
