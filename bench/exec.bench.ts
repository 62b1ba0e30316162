/**
 * Issue 40's target: `gpunet job exec <job> -- true` costs at most 150 ms more than `podman exec` of the same
 * container. Measured side by side in one run, alternating, each a fresh process as a user runs it: the gpunet CLI
 * (its start, the chain read, the signed socket, the node's `podman exec`) beside podman alone; the same command
 * through oclif (`job:exec`, which the start-up path of src/cli/fast-start.ts leaves to oclif: the old path, and what
 * any other form of the command costs); the fast path without NODE_EXTRA_CA_CERTS when it is set; and `job get` of
 * the job, the start and chain read every market command pays through oclif. The test image has no `true`
 * program, so both run `busybox true`.
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {Keypair} from '@solana/web3.js'

import {startLocalnet} from '../src/lib/localnet/server/server.js'
import {containerName, defaultPodmanDataDir, detectRuntime, writePodmanConfig} from '../src/lib/node/runtime/podman.js'
import {ONE_MARKET} from '../test/helpers/markets.js'

const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const IMAGE = 'localhost/gpunet-test-busybox:latest'
const ROUNDS = 15

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

export default async function bench(): Promise<void> {
  if (!(await detectRuntime({dataDir: defaultPodmanDataDir()})).available) {
    process.stdout.write('podman: not available here, skipped\n')
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'gpunet-bench-exec-'))
  const wallet = Keypair.generate()
  const walletFile = join(dir, 'wallet.json')
  writeFileSync(walletFile, JSON.stringify([...wallet.secretKey]))
  const ln = await startLocalnet({
    // One market of one node, instant simulated pulls: what was measured before the localnet had markets.
    markets: ONE_MARKET,
    dataDir: join(dir, 'localnet'),
    port: 0,
    wallet: wallet.publicKey,
    node: {pullSimulation: {rateMbPerSecond: 50, scale: 1_000_000}, gatewayPort: 0, pull: 'never', gpus: 0},
  })
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: '1',
    GPUNET_LOCALNET_DIR: join(dir, 'localnet'),
    GPUNET_WALLET: walletFile,
    XDG_CONFIG_HOME: join(dir, 'config'),
    // Its own code caches (src/cli/code-cache.ts, made by the warm-up run), which no other checkout's gpunet replaces.
    TMPDIR: dir,
  }
  const podmanEnv = {...process.env, ...(await writePodmanConfig(defaultPodmanDataDir()))}
  try {
    const file = join(dir, 'job.json')
    const op = {id: 'main', type: 'container/run', args: {image: IMAGE, cmd: 'sleep 600'}}
    writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops: [op]}))
    const posted = await timed(
      process.execPath,
      [BIN, 'job', 'post', '--file', file, '--timeout', '600', '--wait-for', 'running', '--json'],
      env,
    )
    const job = (JSON.parse(posted.stdout) as {job: string}).job
    const name = containerName(job, 'main')
    // Node 20 loads NODE_EXTRA_CA_CERTS at every start (cold-start.bench.ts): gpunet is measured without it too.
    const {NODE_EXTRA_CA_CERTS: caCerts, ...envWithoutCa} = env
    const exec = [BIN, 'job', 'exec', job, '--', 'busybox', 'true']
    const oclifExec = [BIN, 'job:exec', job, '--', 'busybox', 'true']
    const cases: {name: string; run: () => Promise<{ms: number}>; samples: number[]}[] = [
      {name: 'podman exec', run: () => timed('podman', ['exec', name, 'busybox', 'true'], podmanEnv), samples: []},
      {name: 'gpunet job exec', run: () => timed(process.execPath, exec, env), samples: []},
      {name: 'gpunet job:exec (oclif)', run: () => timed(process.execPath, oclifExec, env), samples: []},
      ...(caCerts
        ? [{name: 'gpunet job exec, no CA file', run: () => timed(process.execPath, exec, envWithoutCa), samples: []}]
        : []),
      // What every market command pays before its own work: the start and one read of the chain.
      {
        name: 'gpunet job get (reference)',
        run: () => timed(process.execPath, [BIN, 'job', 'get', job, '--json'], env),
        samples: [],
      },
    ]
    // The chain says RUNNING once the node claimed the job, a moment before its container is up.
    for (let tries = 0; ; tries++) {
      try {
        await cases[0]!.run()
        break
      } catch (error) {
        if (tries >= 100) throw error
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    // One warm-up of each (disk caches, podman's first look at its storage, the code caches), then alternating rounds.
    for (const c of cases) await c.run()
    for (let i = 0; i < ROUNDS; i++) for (const c of cases) c.samples.push((await c.run()).ms)
    const podman = median(cases[0]!.samples)
    for (const c of cases) {
      const m = median(c.samples)
      const versus = c === cases[0] ? '' : `  ${(m / podman).toFixed(2)}x podman, ${(m - podman).toFixed(0)} ms more`
      process.stdout.write(`  ${c.name.padEnd(30)} n=${ROUNDS}  median ${m.toFixed(0)} ms${versus}\n`)
    }
    const extra = median(cases[1]!.samples) - podman
    const saved = median(cases[2]!.samples) - median(cases[1]!.samples)
    process.stdout.write(`  the start-up path saves ${saved.toFixed(0)} ms of job:exec through oclif\n`)
    process.stdout.write(`  target: job exec at most 150 ms more than podman exec: ${(extra / 150).toFixed(2)} of it\n`)
  } finally {
    await ln.close()
    rmSync(dir, {recursive: true, force: true})
  }
}

/** Runs a process to its end: its wall time and stdout; rejects on a non-zero exit. */
function timed(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ms: number; stdout: string}> {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn(command, args, {env})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('close', (code) =>
      code === 0
        ? resolve({ms: performance.now() - start, stdout})
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`)),
    )
  })
}
