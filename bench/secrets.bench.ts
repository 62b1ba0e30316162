/**
 * Secrets service on loopback: requests per second and p99 latency of POST /login, GET /secrets and
 * POST /secrets (SQLite, durable writes), each beside a bare node:http server answering a fixed JSON body
 * measured in the same run with the same client.
 */
import bs58 from 'bs58'
import {randomBytes} from 'node:crypto'
import {mkdtemp, rm} from 'node:fs/promises'
import {Agent, createServer, request} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {walletFromBytes} from '../src/lib/wallet.js'
import {generateKeypairBytes} from '../src/lib/ed25519.js'
import {createSecretsService} from '../src/lib/secrets/service/server.js'
import {openSqliteStorage} from '../src/lib/secrets/service/sqlite.js'

const CONCURRENCY = 16
const MAX_REQUESTS = 4000
const MAX_MS = 3000

interface Figures {
  rps: number
  p99: number
  count: number
}

interface Call {
  method: string
  path: string
  headers?: Record<string, string>
  body?: string
}

/** Sends `next(i)` requests from CONCURRENCY keep-alive connections until MAX_REQUESTS or MAX_MS. */
async function measure(base: string, next: (i: number) => Call, limit = MAX_REQUESTS): Promise<Figures> {
  const url = new URL(base)
  const agent = new Agent({keepAlive: true, maxSockets: CONCURRENCY})
  const latencies: number[] = []
  let issued = 0
  const started = performance.now()
  const worker = async () => {
    while (issued < limit && performance.now() - started < MAX_MS) {
      const call = next(issued++)
      const t0 = performance.now()
      const status = await send(agent, url, call)
      if (status !== 200) throw new Error(`${call.method} ${call.path} answered ${status}`)
      latencies.push(performance.now() - t0)
    }
  }
  await Promise.all(Array.from({length: CONCURRENCY}, worker))
  const seconds = (performance.now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return {
    rps: latencies.length / seconds,
    p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
    count: latencies.length,
  }
}

function send(agent: Agent, url: URL, call: Call): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {agent, host: '127.0.0.1', port: url.port, method: call.method, path: call.path, headers: call.headers},
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    req.end(call.body)
  })
}

/** Login parameters signed ahead of time, so the client's signing does not count: distinct (wallet, timestamp) pairs. */
function presignedLogins(count: number): string[] {
  const now = Math.floor(Date.now() / 1000)
  const bodies: string[] = []
  for (let w = 0; bodies.length < count; w++) {
    const wallet = walletFromBytes(generateKeypairBytes())
    for (let t = 0; t < 40 && bodies.length < count; t++) {
      const timestamp = now - t
      const signature = bs58.encode(wallet.sign(new TextEncoder().encode(`service_secret_${timestamp}`)))
      bodies.push(JSON.stringify({address: wallet.address, signature, timestamp}))
    }
  }
  return bodies
}

export default async function bench(): Promise<void> {
  const body = JSON.stringify({status: 'ok'})
  const bare = createServer((_req, res) => {
    res.writeHead(200, {'content-type': 'application/json', 'content-length': Buffer.byteLength(body)})
    res.end(body)
  })
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve))
  const bareUrl = `http://127.0.0.1:${(bare.address() as {port: number}).port}`

  const dir = await mkdtemp(join(tmpdir(), 'gpunet-bench-secrets-'))
  const service = createSecretsService({
    storage: openSqliteStorage(join(dir, 'secrets.db')),
    masterKey: randomBytes(32),
    limits: {loginPerAddress: {limit: 1e9, windowMs: 60_000}, loginFailuresPerIp: {limit: 1e9, windowMs: 60_000}},
  })
  const url = await service.listen(0, '127.0.0.1')
  try {
    const json = {'content-type': 'application/json'}
    const logins = presignedLogins(1500)
    const first = logins.pop() as string
    const token = await new Promise<string>((resolve, reject) => {
      fetch(`${url}/login`, {method: 'POST', headers: json, body: first})
        .then((r) => r.json() as Promise<{token: string}>)
        .then((r) => resolve(r.token), reject)
    })
    const auth = {authorization: `Bearer ${token}`}
    const secrets = Object.fromEntries(
      Array.from({length: 10}, (_, i) => [`SECRET_${i}`, randomBytes(48).toString('base64')]),
    )
    await fetch(`${url}/secrets`, {method: 'POST', headers: {...json, ...auth}, body: JSON.stringify({secrets})})

    const baseline = await measure(bareUrl, () => ({method: 'GET', path: '/'}))
    const results: Array<[string, Figures]> = [
      ['bare node:http', baseline],
      [
        'POST /login',
        await measure(url, (i) => ({method: 'POST', path: '/login', headers: json, body: logins[i]}), logins.length),
      ],
      ['GET /secrets', await measure(url, () => ({method: 'GET', path: '/secrets', headers: auth}))],
      [
        'POST /secrets',
        await measure(url, (i) => ({
          method: 'POST',
          path: '/secrets',
          headers: {...json, ...auth},
          body: JSON.stringify({secrets: {[`SECRET_${i % 10}`]: `value-${i}`}}),
        })),
      ],
    ]
    process.stdout.write(
      `loopback, ${CONCURRENCY} keep-alive connections, up to ${MAX_REQUESTS} requests or ${MAX_MS / 1000} s each\n`,
    )
    process.stdout.write(
      `${'endpoint'.padEnd(16)}${'req/s'.padStart(10)}${'p99 ms'.padStart(10)}${'req/s ratio'.padStart(14)}${'p99 ratio'.padStart(12)}\n`,
    )
    for (const [name, f] of results) {
      const rpsRatio = (f.rps / baseline.rps).toFixed(3)
      const p99Ratio = (f.p99 / baseline.p99).toFixed(1)
      process.stdout.write(
        `${name.padEnd(16)}${f.rps.toFixed(0).padStart(10)}${f.p99.toFixed(2).padStart(10)}${`${rpsRatio}x`.padStart(14)}${`${p99Ratio}x`.padStart(12)}\n`,
      )
    }
  } finally {
    await service.close()
    await new Promise((resolve) => bare.close(resolve))
    await rm(dir, {recursive: true, force: true})
  }
}
