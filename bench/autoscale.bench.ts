/**
 * Issue 57: what autoscaling behind gpunet's gateway gives and costs, beside a fixed count, on one localnet (its
 * manager and gateway, six podman nodes, each one job at a time) at time_scale 10. A service whose answers take a
 * second, deployed twice: (a) autoscaled, min 0 / max 3 / target 2, (b) a fixed 3 replicas.
 *
 * 1. From zero: (a) idle at 0 replicas, one request; the time from it to the AUTOSCALE_UP decision (the event's
 *    time) and to its answer (a second of it is the service's own); the median of TRIALS.
 * 2. A load step against both at once, so both see the same machine at the same moments: idle, CLIENTS concurrent
 *    clients looping GETs, idle again. Replica-seconds (RUNNING jobs, sampled), answers, failures (anything but a
 *    200, a held request past its bound included), p50/p99 latency, the ratios autoscaled / fixed, and the replicas
 *    of each over time.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {Agent} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Keypair, PublicKey} from '@solana/web3.js'

import {startLocalnet} from '../src/lib/localnet/server/server.js'
import {detectRuntime} from '../src/lib/node/runtime/podman.js'
import {ONE_MARKET} from '../test/helpers/markets.js'
import {buildTestImages, TEST_IMAGE} from '../test/helpers/podman.js'
import {get, managerCall, quantile} from './one-replica.js'

const SCALE = 10
const POLICY = {min_replicas: 0, max_replicas: 3, target_concurrency: 2, scale_down_after: 10}
const FIXED = 3
const TRIALS = 5
const CLIENTS = 6
const BEFORE_MS = 4000
const STEP_MS = 30_000
const AFTER_MS = 20_000
const SAMPLE_MS = 500

/** busybox httpd whose /cgi-bin/slow answers its job's address after a second (test/lib/deployments/autoscale-zero). */
const SLOW_JOB = {
  version: '0.1',
  type: 'container',
  ops: [
    {
      id: 'web',
      type: 'container/run',
      args: {
        image: TEST_IMAGE,
        cmd:
          'mkdir -p /tmp/w/cgi-bin && echo ok > /tmp/w/index.html && ' +
          `printf '#!/bin/sh\\nsleep 1\\nprintf "Content-Type: text/plain\\\\r\\\\n\\\\r\\\\n"\\necho %%global.job%%\\n' > /tmp/w/cgi-bin/slow && ` +
          'chmod +x /tmp/w/cgi-bin/slow && exec httpd -f -p 8080 -h /tmp/w',
        expose: 8080,
      },
    },
  ],
}

interface Job {
  job: string
  state: string
}
interface Event {
  type: string
  created_at: string
}

/** One side of the load step: what its clients saw and its replicas at each sample. */
interface Side {
  latencies: number[]
  failures: number
  /** RUNNING jobs at each sample, with the sample's time (ms since the step's start). */
  replicas: {at: number; running: number}[]
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gpunet-bench-autoscale-'))
  try {
    const detection = await detectRuntime({dataDir: dir})
    if (!detection.available) {
      process.stdout.write(`podman: not available here (${detection.reason}), skipped\n`)
      return
    }
    await buildTestImages(dir)
    await run(dir)
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

async function run(dir: string): Promise<void> {
  const owner = Keypair.generate()
  const ln = await startLocalnet({
    markets: ONE_MARKET,
    dataDir: join(dir, 'localnet'),
    port: 0,
    wallet: owner.publicKey,
    node: {gatewayPort: 0, runtime: 'podman', pull: 'never', gpus: 0, healthIntervalMs: 200, nodes: 3 + FIXED},
  })
  const agent = new Agent({keepAlive: true})
  try {
    const manager = ln.runtime.deploymentManager!
    const call = (method: string, path: string, body?: unknown) => managerCall(manager, owner, method, path, body)
    const create = async (name: string, change: Record<string, unknown>) => {
      const created = (await call('POST', '/api/deployments/create', {
        name,
        market: ln.node.market.toBase58(),
        timeout: 60,
        time_scale: SCALE,
        strategy: 'SIMPLE-EXTEND',
        job_definition: SLOW_JOB,
        new_vault: true,
        ...change,
      })) as {id: string; vault: string}
      ln.node.fund(new PublicKey(created.vault), {lamports: 500_000_000n, tokens: 10_000_000n})
      await call('POST', `/api/deployments/${created.id}/start`)
      return created.id
    }
    const scaled = await create('autoscaled', {replicas: 1, autoscale: POLICY})
    const fixed = await create('fixed', {replicas: FIXED})
    const gateway = ln.agent!.gateway
    const slow = (id: string) => new URL('cgi-bin/slow', gateway.deploymentUrl(id)).href
    const running = async (id: string) =>
      ((await call('GET', `/api/deployments/${id}/jobs?limit=100`)) as {jobs: Job[]}).jobs.filter(
        (j) => j.state === 'RUNNING',
      ).length
    const open = async (id: string) =>
      ((await call('GET', `/api/deployments/${id}/jobs?limit=100`)) as {jobs: Job[]}).jobs.filter(
        (j) => j.state === 'RUNNING' || j.state === 'QUEUED',
      ).length
    const atZero = async () =>
      ((await call('GET', `/api/deployments/${scaled}`)) as {replicas: number}).replicas === 0 &&
      (await open(scaled)) === 0

    // The fixed one serving all its replicas; the autoscaled one idle at 0.
    await until('the fixed deployment serving 3 replicas', 180_000, async () => (await running(fixed)) === FIXED)
    await until('the fixed deployment answering', 60_000, async () => (await get(agent, slow(fixed))).status === 200)

    // 1. From zero.
    const decided: number[] = []
    const answered: number[] = []
    const runningAt: number[] = []
    for (let trial = 0; trial < TRIALS; trial++) {
      await until('the autoscaled deployment idle at 0', 180_000, atZero)
      const sent = Date.now()
      const answer = get(new Agent(), slow(scaled)).catch(() => ({status: 0, ms: 0}))
      const up = await until(
        'AUTOSCALE_UP',
        60_000,
        async () => {
          const {events} = (await call('GET', `/api/deployments/${scaled}/events?limit=20&sort_order=desc`)) as {
            events: Event[]
          }
          return events.find((e) => e.type === 'AUTOSCALE_UP' && Date.parse(e.created_at) >= sent - 1)
        },
        20,
      )
      // When its replica is RUNNING on chain, as the manager reads it: between the decision and the answer.
      let answeredYet = false
      const done = answer.then((a) => ((answeredYet = true), a))
      const ran = await until(
        'its replica RUNNING',
        60_000,
        async () => answeredYet || (await running(scaled)) > 0,
        20,
      ).then(() => Date.now())
      const {status, ms} = await done
      if (status !== 200) throw new Error(`the held request answered ${status}`)
      decided.push(Date.parse(up.created_at) - sent)
      runningAt.push(Math.min(ran - sent, ms))
      answered.push(ms)
    }

    // 2. The load step against both.
    await until('the autoscaled deployment idle at 0', 180_000, atZero)
    const sides = new Map<string, Side>([
      [scaled, {latencies: [], failures: 0, replicas: []}],
      [fixed, {latencies: [], failures: 0, replicas: []}],
    ])
    const start = Date.now()
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        const at = Date.now() - start
        for (const [id, side] of sides) side.replicas.push({at, running: await running(id)})
        await sleep(SAMPLE_MS - ((Date.now() - start) % SAMPLE_MS))
      }
    })()
    await sleep(BEFORE_MS)
    let loading = true
    const loops = [...sides].flatMap(([id, side]) =>
      Array.from({length: CLIENTS}, async () => {
        while (loading) {
          const answer = await get(agent, slow(id)).catch(() => ({status: 0, ms: 0}))
          if (answer.status === 200) side.latencies.push(answer.ms)
          else side.failures++
        }
      }),
    )
    await sleep(STEP_MS)
    loading = false
    await Promise.all(loops)
    await sleep(AFTER_MS)
    sampling = false
    await sampler
    const end = Date.now() - start

    const median = (values: number[]) => quantile(values, 0.5)
    process.stdout.write(
      `  from zero (min 0 / max 3 / target 2, time_scale ${SCALE}, n=${TRIALS}): first held request -> ` +
        `AUTOSCALE_UP median ${ms(median(decided))} [${decided.map(ms).join(', ')}], ` +
        `-> its replica RUNNING median ${ms(median(runningAt))} [${runningAt.map(ms).join(', ')}], ` +
        `-> its answer median ${ms(median(answered))} [${answered.map(ms).join(', ')}] (1 s of it the service's)\n`,
    )
    const figures = [...sides.values()].map((side) => ({
      replicaSeconds: replicaSeconds(side, end),
      answers: side.latencies.length,
      failures: side.failures,
      p50: quantile(side.latencies, 0.5),
      p99: quantile(side.latencies, 0.99),
    }))
    const [a, b] = figures as [(typeof figures)[0], (typeof figures)[0]]
    process.stdout.write(
      `  load step: idle ${BEFORE_MS / 1000} s, ${CLIENTS} concurrent clients each ${STEP_MS / 1000} s, idle ` +
        `${AFTER_MS / 1000} s (${(end / 1000).toFixed(0)} s sampled)\n`,
    )
    for (const [name, f] of [
      ['autoscaled', a],
      [`fixed ${FIXED}`, b],
    ] as const) {
      process.stdout.write(
        `  ${name.padEnd(11)} replica-seconds ${f.replicaSeconds.toFixed(1).padStart(6)}  answers ${String(f.answers).padStart(4)}  ` +
          `failures ${f.failures}  p50 ${ms(f.p50)}  p99 ${ms(f.p99)}\n`,
      )
    }
    process.stdout.write(
      `  autoscaled / fixed: replica-seconds ${(a.replicaSeconds / b.replicaSeconds).toFixed(2)}x, answers ` +
        `${(a.answers / b.answers).toFixed(2)}x, p50 ${(a.p50 / b.p50).toFixed(2)}x, p99 ${(a.p99 / b.p99).toFixed(2)}x\n`,
    )
    process.stdout.write(
      `  replicas each second (load from ${BEFORE_MS / 1000} s to ${(BEFORE_MS + STEP_MS) / 1000} s):\n`,
    )
    for (const [name, side] of [
      ['autoscaled', sides.get(scaled)!],
      [`fixed ${FIXED}`, sides.get(fixed)!],
    ] as const) {
      const perSecond = side.replicas.filter((_, i) => i % (1000 / SAMPLE_MS) === 0).map((s) => s.running)
      process.stdout.write(`    ${name.padEnd(11)} ${perSecond.join('')}\n`)
    }
    const load = Array.from({length: Math.ceil(end / 1000)}, (_, s) =>
      s * 1000 >= BEFORE_MS && s * 1000 < BEFORE_MS + STEP_MS ? String(CLIENTS) : '.',
    )
    process.stdout.write(`    ${'clients'.padEnd(11)} ${load.join('')}\n`)
    await call('POST', `/api/deployments/${scaled}/stop`)
    await call('POST', `/api/deployments/${fixed}/stop`)
  } finally {
    agent.destroy()
    await ln.close()
  }
}

/** The RUNNING jobs integrated over the samples (each counted until the next one, the last until `end`). */
function replicaSeconds(side: Side, end: number): number {
  let total = 0
  side.replicas.forEach((sample, i) => {
    const next = side.replicas[i + 1]?.at ?? end
    total += (sample.running * (next - sample.at)) / 1000
  })
  return total
}

/** Answers `check`'s first value other than undefined or false, asked every `everyMs`; throws after `ms`. */
async function until<T>(
  what: string,
  ms: number,
  check: () => Promise<T | undefined | false>,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(everyMs)
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))
}

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(0)} ms`
}
