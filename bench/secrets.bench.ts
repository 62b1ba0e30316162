/**
 * Secrets service on loopback under autocannon (2 connections): requests per second and p99 latency of
 * GET /secrets, POST /secrets (SQLite, every acknowledged write durable) and POST /login (a distinct identity
 * and timestamp per request), each beside a bare node:http server answering a fixed JSON body, measured in the
 * same run and in rounds (bare first in each), so the ratios hold on a busy machine. Each server runs in a
 * process of its own (bench/secrets-target.ts). `BENCH_CPU_PROF=DIR` writes a CPU profile of the service there.
 */
import autocannon from 'autocannon'
import bs58 from 'bs58'
import {type ChildProcess, spawn} from 'node:child_process'
import {once} from 'node:events'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {generateKeypairBytes} from '../src/lib/ed25519.js'
import {walletFromBytes} from '../src/lib/wallet.js'

const CONNECTIONS = 2
const SECONDS = 3
const ROUNDS = 3
/** What the issue asks of each endpoint, as a fraction of the bare server's requests per second. */
const TARGETS = {'GET /secrets': 0.35, 'POST /secrets': 0.15, 'POST /login': 0.1}

interface Figures {
  rps: number
  p99: number
}

const json = {'content-type': 'application/json'}

/** Starts bench/secrets-target.ts KIND; resolves with the process and the URL it printed. */
async function target(kind: 'bare' | 'service', dir: string): Promise<{child: ChildProcess; url: string}> {
  const script = fileURLToPath(new URL('secrets-target.ts', import.meta.url))
  const profile =
    process.env.BENCH_CPU_PROF && kind === 'service' ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', script, kind, dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer]
  return {child, url: chunk.toString().trim()}
}

async function load(options: autocannon.Options): Promise<Figures> {
  const result = await autocannon({connections: CONNECTIONS, duration: SECONDS, ...options})
  const failed = result.non2xx + result.errors + result.timeouts
  if (failed > 0) throw new Error(`${options.url}: ${failed} requests failed (non-2xx ${result.non2xx})`)
  return {rps: result.requests.average, p99: result.latency.p99}
}

/** Login bodies signed ahead of time: distinct (wallet, timestamp) pairs, all within the service's 60 s. */
function presignedLogins(count: number): string[] {
  const now = Math.floor(Date.now() / 1000)
  const bodies: string[] = []
  while (bodies.length < count) {
    const wallet = walletFromBytes(generateKeypairBytes())
    for (let t = -30; t <= 30 && bodies.length < count; t++) {
      const signature = bs58.encode(wallet.sign(new TextEncoder().encode(`service_secret_${now + t}`)))
      bodies.push(JSON.stringify({address: wallet.address, signature, timestamp: now + t}))
    }
  }
  return bodies
}

export default async function bench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gpunet-bench-secrets-'))
  const bare = await target('bare', dir)
  const service = await target('service', dir)
  try {
    const [first] = presignedLogins(1)
    const login = await fetch(`${service.url}/login`, {method: 'POST', headers: json, body: first})
    const auth = {authorization: `Bearer ${((await login.json()) as {token: string}).token}`}
    const secrets = Object.fromEntries(Array.from({length: 10}, (_, i) => [`SECRET_${i}`, `value-${i}-`.repeat(6)]))
    await fetch(`${service.url}/secrets`, {
      method: 'POST',
      headers: {...json, ...auth},
      body: JSON.stringify({secrets}),
    })

    const rounds: Array<Record<string, Figures>> = []
    for (let round = 0; round < ROUNDS; round++) {
      const figures: Record<string, Figures> = {}
      figures['bare node:http'] = await load({url: bare.url})
      figures['GET /secrets'] = await load({url: `${service.url}/secrets`, headers: auth})
      let n = 0
      figures['POST /secrets'] = await load({
        url: `${service.url}/secrets`,
        method: 'POST',
        headers: {...json, ...auth},
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              body: JSON.stringify({secrets: {[`SECRET_${n % 10}`]: `written-${n++}`}}),
            }),
          },
        ],
      })
      // Enough for three times the bare server's rate: the service will not come close.
      const logins = presignedLogins(Math.ceil(figures['bare node:http'].rps * SECONDS * 0.3) + 1000)
      let next = 0
      figures['POST /login'] = await load({
        url: `${service.url}/login`,
        method: 'POST',
        headers: json,
        requests: [{setupRequest: (request) => ({...request, body: logins[next++ % logins.length]})}],
      })
      if (next > logins.length) throw new Error('not enough presigned logins: raise the factor')
      rounds.push(figures)
    }

    process.stdout.write(
      `loopback, autocannon, ${CONNECTIONS} connections, ${SECONDS} s per measurement, ${ROUNDS} rounds; SQLite synchronous=FULL\n`,
    )
    process.stdout.write(
      `${'endpoint'.padEnd(16)}${'req/s'.padStart(9)}${'p99 ms'.padStart(8)}   ${'ratio per round'.padEnd(22)}${'median'.padStart(8)}${'target'.padStart(8)}\n`,
    )
    for (const name of Object.keys(rounds[0] as object)) {
      const ratios = rounds
        .map((r) => (r[name] as Figures).rps / (r['bare node:http'] as Figures).rps)
        .sort((a, b) => a - b)
      const last = rounds.at(-1)?.[name] as Figures
      const median = ratios[Math.floor(ratios.length / 2)] as number
      const target = TARGETS[name as keyof typeof TARGETS]
      process.stdout.write(
        `${name.padEnd(16)}${last.rps.toFixed(0).padStart(9)}${String(last.p99).padStart(8)}   ${rounds
          .map((r) => `${((r[name] as Figures).rps / (r['bare node:http'] as Figures).rps).toFixed(3)}x`)
          .join(' ')
          .padEnd(
            22,
          )}${`${median.toFixed(3)}x`.padStart(8)}${target ? `${target}x ${median >= target ? 'ok' : 'MISSED'}`.padStart(12) : ''}\n`,
      )
    }
  } finally {
    for (const {child} of [bare, service]) {
      child.kill('SIGTERM')
      if (child.exitCode === null) await once(child, 'exit')
    }
    await rm(dir, {recursive: true, force: true})
  }
}
