/**
 * Issue 40's target: `gpunet job exec <job> -- true` costs at most 150 ms more than `podman exec` of the same
 * container. Measured side by side in one run, alternating, each a fresh process as a user runs it: the gpunet CLI
 * (its start, the chain read, the signed socket, the node's `podman exec`) beside podman alone. The test image has
 * no `true` program, so both run `busybox true`.
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {Keypair} from '@solana/web3.js'

import {startLocalnet} from '../src/lib/localnet/server.js'
import {containerName, defaultPodmanDataDir, detectRuntime, writePodmanConfig} from '../src/lib/node/runtime/podman.js'

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
    dataDir: join(dir, 'localnet'),
    port: 0,
    wallet: wallet.publicKey,
    node: {gatewayPort: 0, pull: 'never', gpus: 0},
  })
  const env = {
    ...process.env,
    NO_COLOR: '1',
    GPUNET_LOCALNET_DIR: join(dir, 'localnet'),
    GPUNET_WALLET: walletFile,
    XDG_CONFIG_HOME: join(dir, 'config'),
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
    const gpunet: number[] = []
    const podman: number[] = []
    // One warm-up of each (disk caches, podman's first look at its storage), then alternating rounds.
    await timed('podman', ['exec', name, 'busybox', 'true'], podmanEnv)
    await timed(process.execPath, [BIN, 'job', 'exec', job, '--', 'busybox', 'true'], env)
    for (let i = 0; i < ROUNDS; i++) {
      podman.push((await timed('podman', ['exec', name, 'busybox', 'true'], podmanEnv)).ms)
      gpunet.push((await timed(process.execPath, [BIN, 'job', 'exec', job, '--', 'busybox', 'true'], env)).ms)
    }
    const extra = median(gpunet) - median(podman)
    process.stdout.write(
      `  podman exec            n=${ROUNDS}  median ${median(podman).toFixed(0)} ms\n` +
        `  gpunet job exec        n=${ROUNDS}  median ${median(gpunet).toFixed(0)} ms\n` +
        `  ratio gpunet/podman: ${(median(gpunet) / median(podman)).toFixed(2)}x; gpunet costs ${extra.toFixed(0)} ms more ` +
        `(target at most 150 ms: ${(extra / 150).toFixed(2)} of it)\n`,
    )
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
