/**
 * Issue 20's target: the time from a line printed in the container to that line on a `gpunet job logs --follow`
 * client's stdout, on the localnet, with 10 followers of one job (target: median at most 50 ms, p99 at most 200 ms).
 * Measured side by side in one run: one follower, then ten, each a real CLI process reading through the node API.
 *
 * The container stamps each line with the kernel's uptime (`/proc/uptime`, shared by the host and its containers,
 * 10 ms steps: each figure carries up to 10 ms of rounding, so a median below 10 ms reads 0), and the bench reads the
 * same clock when the line reaches it. The same is measured first with the node running host processes, which stamp
 * with `date +%s%N` (nanoseconds): the precise figures, without podman's own pipe.
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {Keypair} from '@solana/web3.js'

import {startLocalnet} from '../src/lib/localnet/server/server.js'
import {detectRuntime, defaultPodmanDataDir} from '../src/lib/node/runtime/podman.js'
import {ONE_MARKET} from '../test/helpers/markets.js'

const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const IMAGE = 'localhost/gpunet-test-busybox:latest'
const LINES = 100

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
}

/** Milliseconds on the clock the job stamps its lines with. */
type Clock = {now(): number; stamp: string; parse(text: string): number}
const UPTIME: Clock = {
  now: () => Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000,
  stamp: '$(cat /proc/uptime)',
  parse: (text) => Number(text.split(' ')[0]) * 1000,
}
const REALTIME: Clock = {
  now: () => Date.now(),
  stamp: '$(date +%s%N)',
  parse: (text) => Number(text) / 1e6,
}

export default async function bench(): Promise<void> {
  // Host processes first (a nanosecond clock: the precise figures), then podman when it runs here.
  await scenario('host', REALTIME)
  if ((await detectRuntime({dataDir: defaultPodmanDataDir()})).available) await scenario('podman', UPTIME)
  else process.stdout.write('podman: not available here, skipped\n')
}

async function scenario(runtime: 'host' | 'podman', clock: Clock): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gpunet-bench-logs-'))
  const wallet = Keypair.generate()
  const walletFile = join(dir, 'wallet.json')
  writeFileSync(walletFile, JSON.stringify([...wallet.secretKey]))
  const ln = await startLocalnet({
    // One market of one node, instant simulated pulls: what was measured before the localnet had markets.
    markets: ONE_MARKET,
    dataDir: join(dir, 'localnet'),
    port: 0,
    wallet: wallet.publicKey,
    // A podman that cannot be found leaves the node on host processes.
    node: {
      pullSimulation: {rateMbPerSecond: 50, scale: 1_000_000},
      gatewayPort: 0,
      pull: 'never',
      gpus: 0,
      hostProcesses: runtime === 'host',
      ...(runtime === 'host' ? {podman: join(dir, 'no-podman')} : {}),
    },
  })
  const env = {
    ...process.env,
    NO_COLOR: '1',
    GPUNET_LOCALNET_DIR: join(dir, 'localnet'),
    GPUNET_WALLET: walletFile,
    XDG_CONFIG_HOME: join(dir, 'config'),
  }
  try {
    const what = runtime === 'podman' ? 'podman container, uptime clock (10 ms steps)' : 'host processes, ns clock'
    process.stdout.write(`${what}\n`)
    const one = await measure(1, clock, dir, env)
    const ten = await measure(10, clock, dir, env)
    const row = (name: string, samples: number[]) =>
      `  ${name.padEnd(12)} n=${String(samples.length).padEnd(5)} median ${percentile(samples, 50).toFixed(1)} ms  p99 ${percentile(samples, 99).toFixed(1)} ms`
    const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a (below the clock step)')
    process.stdout.write(`${row('1 follower', one)}\n${row('10 followers', ten)}\n`)
    process.stdout.write(
      `  ratio 10/1: median ${ratio(percentile(ten, 50), percentile(one, 50))}, p99 ${ratio(percentile(ten, 99), percentile(one, 99))}\n`,
    )
    process.stdout.write(
      `  target (10 followers): median ${(percentile(ten, 50) / 50).toFixed(2)} of 50 ms, p99 ${(percentile(ten, 99) / 200).toFixed(2)} of 200 ms\n`,
    )
  } finally {
    await ln.close()
    rmSync(dir, {recursive: true, force: true})
  }
}

/** Posts a job printing LINES stamped lines every 100 ms, follows it with `followers` CLI processes: latencies (ms). */
async function measure(followers: number, clock: Clock, dir: string, env: NodeJS.ProcessEnv): Promise<number[]> {
  // It waits before printing, so every follower is connected when the first line comes.
  const cmd = `sleep 6; i=0; while [ $i -lt ${LINES} ]; do i=$((i+1)); echo "$i ${clock.stamp}"; sleep 0.1; done`
  const file = join(dir, `job-${followers}.json`)
  const op = {id: 'stamps', type: 'container/run', args: {image: IMAGE, cmd}}
  writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops: [op]}))
  const posted = await run(['job', 'post', '--file', file, '--timeout', '600', '--json'], env)
  const job = (JSON.parse(posted) as {job: string}).job
  const latencies: number[] = []
  await Promise.all(
    Array.from({length: followers}, () =>
      follow(job, env, (text) => {
        const at = clock.now()
        const [, stamp = ''] = /^\d+ (.*)$/.exec(text) ?? []
        if (stamp) latencies.push(at - clock.parse(stamp))
      }),
    ),
  )
  return latencies
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {env})
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`gpunet ${args.join(' ')}: ${err}`))))
  })
}

/** Runs `job logs --follow --json` and hands each line's text to `onLine` the moment it is read from stdout. */
function follow(job: string, env: NodeJS.ProcessEnv, onLine: (text: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'job', 'logs', job, '--follow', '--json'], {env})
    let buffered = ''
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString()
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        onLine((JSON.parse(buffered.slice(0, nl)) as {line: string}).line)
        buffered = buffered.slice(nl + 1)
      }
    })
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`job logs exited ${code}`))))
  })
}
