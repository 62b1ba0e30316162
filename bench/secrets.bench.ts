/**
 * Secrets service on loopback under autocannon (2 connections): requests per second and p99 latency of
 * GET /secrets, POST /secrets (SQLite, every acknowledged write durable) and POST /login (a distinct identity
 * and timestamp per request), each beside a bare node:http server answering a fixed JSON body, measured in the
 * same run and in rounds (bare first in each), so the ratios hold on a busy machine. Each server runs in a
 * process of its own (bench/secrets-target.ts). `BENCH_CPU_PROF=DIR` writes a CPU profile of the service there.
 * `GPUNET_BENCH_BASELINE=/path/to/other/checkout` also loads that checkout's service in each round (its
 * dependencies installed), and prints the ratios of both: before and after, in the same run. Each round also
 * loads a bare server that answers each write once an fdatasync holds it, about the most a durable server answers
 * here, and times the disk's flush, which moves from run to run on a shared host.
 */
import autocannon from 'autocannon'
import bs58 from 'bs58'
import {type ChildProcess, spawn} from 'node:child_process'
import {once} from 'node:events'
import {fdatasyncSync} from 'node:fs'
import {mkdir, mkdtemp, open, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {generateKeypairBytes} from '../src/lib/keys/ed25519.js'
import {walletFromBytes} from '../src/lib/keys/wallet.js'

const CONNECTIONS = 2
const SECONDS = 3
const ROUNDS = 3
/** What the issue asks of each endpoint, as a fraction of the bare server's requests per second. */
const TARGETS = {'GET /secrets': 0.35, 'POST /secrets': 0.15, 'POST /login': 0.1}
/** node:http answering POST /secrets' load once an fdatasync holds each body: about the most a durable server answers here. */
const DURABLE = 'bare, durable (fdatasync)'

interface Figures {
  rps: number
  p99: number
}

const json = {'content-type': 'application/json'}

/** Starts bench/secrets-target.ts KIND; resolves with the process and the URL it printed. */
async function target(
  kind: 'bare' | 'durable' | 'service',
  dir: string,
  source?: string,
): Promise<{child: ChildProcess; url: string}> {
  const script = fileURLToPath(new URL('secrets-target.ts', import.meta.url))
  const profile =
    process.env.BENCH_CPU_PROF && kind === 'service' ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', script, kind, dir, ...(source ? [source] : [])],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  // A target that dies before printing its URL (a baseline without its dependencies, say) fails the bench instead
  // of leaving it waiting for ever.
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bench/secrets-target.ts ${kind} exited (${code}) before listening`)))
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()))
  })
  return {child, url}
}

/**
 * The disk's flush latency now, in the folder the services write to: the median of `count` rounds of a 4 KiB
 * write over earlier data followed by an fdatasync (what a commit of one small SQLite transaction asks of the
 * disk), in microseconds.
 */
async function diskFlushMicros(dir: string, count = 200): Promise<number> {
  const file = await open(join(dir, 'flush-probe'), 'w+')
  try {
    const page = Buffer.alloc(4096, 1)
    for (let i = 0; i < 64; i++) await file.write(page, 0, page.length, i * page.length)
    await file.sync()
    const times: number[] = []
    for (let i = 0; i < count; i++) {
      await file.write(page, 0, page.length, (i % 64) * page.length)
      const start = process.hrtime.bigint()
      fdatasyncSync(file.fd)
      times.push(Number(process.hrtime.bigint() - start) / 1000)
    }
    return times.sort((a, b) => a - b)[Math.floor(count / 2)] as number
  } finally {
    await file.close()
  }
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

/** POST /secrets writing one secret per request, a new value each time; the same load for the durable bare server. */
function loadWrites(url: string, auth: Record<string, string>): Promise<Figures> {
  let n = 0
  return load({
    url,
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
}

/** The three endpoints of one service, loaded one after the other; the service is logged in and holds 10 secrets. */
async function measureService(url: string, bareRps: number): Promise<Record<string, Figures>> {
  const [first] = presignedLogins(1)
  const login = await fetch(`${url}/login`, {method: 'POST', headers: json, body: first})
  const auth = {authorization: `Bearer ${((await login.json()) as {token: string}).token}`}
  const secrets = Object.fromEntries(Array.from({length: 10}, (_, i) => [`SECRET_${i}`, `value-${i}-`.repeat(6)]))
  await fetch(`${url}/secrets`, {method: 'POST', headers: {...json, ...auth}, body: JSON.stringify({secrets})})
  const figures: Record<string, Figures> = {}
  figures['GET /secrets'] = await load({url: `${url}/secrets`, headers: auth})
  figures['POST /secrets'] = await loadWrites(`${url}/secrets`, auth)
  // Enough for a third of the bare server's rate: the service does not come close.
  const logins = presignedLogins(Math.ceil(bareRps * SECONDS * 0.3) + 1000)
  let next = 0
  figures['POST /login'] = await load({
    url: `${url}/login`,
    method: 'POST',
    headers: json,
    requests: [{setupRequest: (request) => ({...request, body: logins[next++ % logins.length]})}],
  })
  if (next > logins.length) throw new Error('not enough presigned logins: raise the factor')
  return figures
}

export default async function bench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gpunet-bench-secrets-'))
  const baseline = process.env.GPUNET_BENCH_BASELINE
  await mkdir(join(dir, 'now'))
  await mkdir(join(dir, 'baseline'))
  const bare = await target('bare', dir)
  const durable = await target('durable', dir)
  const services: Array<[string, {child: ChildProcess; url: string}]> = [
    ['', await target('service', join(dir, 'now'))],
  ]
  if (baseline) services.push([' (baseline)', await target('service', join(dir, 'baseline'), baseline)])
  try {
    const rounds: Array<Record<string, Figures>> = []
    const flushes: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const bareFigures = await load({url: bare.url})
      flushes.push(await diskFlushMicros(dir))
      const figures: Record<string, Figures> = {
        'bare node:http': bareFigures,
        [DURABLE]: await loadWrites(durable.url, {}),
      }
      for (const [suffix, service] of services) {
        for (const [name, f] of Object.entries(await measureService(service.url, bareFigures.rps)))
          figures[`${name}${suffix}`] = f
      }
      rounds.push(figures)
    }

    process.stdout.write(
      `loopback, autocannon, ${CONNECTIONS} connections, ${SECONDS} s per measurement, ${ROUNDS} rounds; SQLite, each answered write on disk${baseline ? `; baseline ${baseline}` : ''}\n`,
    )
    process.stdout.write(
      `${'endpoint'.padEnd(28)}${'req/s'.padStart(9)}${'p99 ms'.padStart(8)}   ${'ratio per round'.padEnd(22)}${'median'.padStart(8)}${'target'.padStart(14)}\n`,
    )
    const ratio = (r: Record<string, Figures>, name: string) =>
      (r[name] as Figures).rps / (r['bare node:http'] as Figures).rps
    for (const name of Object.keys(rounds[0] as object)) {
      const ratios = rounds.map((r) => ratio(r, name)).sort((a, b) => a - b)
      const last = rounds.at(-1)?.[name] as Figures
      const median = ratios[Math.floor(ratios.length / 2)] as number
      const target = TARGETS[name as keyof typeof TARGETS]
      const perRound = rounds.map((r) => `${ratio(r, name).toFixed(3)}x`).join(' ')
      const verdict = target ? `${target}x ${median >= target ? 'ok' : 'MISSED'}` : ''
      process.stdout.write(
        `${name.padEnd(28)}${last.rps.toFixed(0).padStart(9)}${String(last.p99).padStart(8)}   ${perRound.padEnd(22)}${`${median.toFixed(3)}x`.padStart(8)}${verdict.padStart(14)}\n`,
      )
    }
    // Each connection waits for its write to be on disk before it sends the next, so at most CONNECTIONS writes
    // share a flush, and the disk's flush latency moves from run to run on a shared host: the durable bare server
    // shows what that leaves for any server, and POST's share of it what the service costs on top.
    const list = (values: number[], digits: number, unit: string) =>
      values.map((v) => `${v.toFixed(digits)}${unit}`).join(' ')
    const shares = Object.keys(rounds[0] as object)
      .filter((name) => name.startsWith('POST /secrets'))
      .map(
        (name) =>
          `${name} ${list(
            rounds.map((r) => (100 * ratio(r, name)) / ratio(r, DURABLE)),
            0,
            '%',
          )}`,
      )
    process.stdout.write(
      `\ndisk flush (4 KiB write + fdatasync), median per round: ${list(flushes, 0, ' µs')}\n` +
        `share of the durable bare server's rate per round: ${shares.join('; ')}\n`,
    )
  } finally {
    for (const {child} of [bare, durable, ...services.map(([, s]) => s)]) {
      child.kill('SIGTERM')
      if (child.exitCode === null) await once(child, 'exit')
    }
    await rm(dir, {recursive: true, force: true})
  }
}
