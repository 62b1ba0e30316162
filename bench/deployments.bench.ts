/**
 * Issue 37's figures: requests through an INFINITE deployment's stable URL on the localnet (4 nodes, podman), with
 * their failed count and latency percentiles, side by side while nothing changes and through rotations and a
 * replacement; and the time from a replica's death (its process killed) to its replacement serving (its own URL on
 * the gateway answers the service's 200). Rotations on jobs of 40 s (timeout 60 min at time_scale 90: a rotation
 * every ~27 s); the replacement on a deployment at time_scale 1, so no rotation mixes in (the manager polls every 5 s).
 */
import {execFileSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {readKeypair} from '../src/lib/keys/wallet.js'
import type {LocalnetStatus} from '../src/lib/localnet/server/control.js'
import {defaultPodmanDataDir, detectRuntime} from '../src/lib/node/runtime/podman.js'
import {runCli} from '../test/helpers/cli.js'
import {cliSandbox} from '../test/helpers/cli-localnet.js'
import {deploymentEvents, deploymentJobs} from '../test/helpers/deployments.js'
import {okService} from '../test/helpers/podman.js'
import {getThrough, loopOnStableUrl, percentile, type StableUrlClient} from '../test/helpers/stable-url-client.js'

const IMAGE = 'localhost/gpunet-test-busybox:latest'
const SERVICE = okService('benchsvc')

export default async function bench(): Promise<void> {
  const podmanHere = await detectRuntime({dataDir: defaultPodmanDataDir()})
  const imageHere = podmanHere.available && spawnOk('podman', ['image', 'exists', IMAGE])
  if (!imageHere) {
    process.stdout.write('podman or its test image (built by the podman test suites) not available here, skipped\n')
    return
  }
  const box = cliSandbox()
  const json = async (args: string[]) => {
    const result = await runCli([...args, '--json'], {env: box.env, cwd: box.dir})
    if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`)
    return JSON.parse(result.stdout) as Record<string, unknown> & {id: string}
  }
  try {
    const status = (await json([
      'localnet',
      'start',
      '--detach',
      '--nodes',
      '4',
      '--runtime',
      'podman',
    ])) as unknown as LocalnetStatus
    const owner = readKeypair(box.env.GPUNET_WALLET!)
    const manager = status.deploymentManager!
    const port = Number(new URL(status.gatewayUrl!).port)
    writeFileSync(join(box.dir, 'svc.json'), JSON.stringify(SERVICE))
    /** An INFINITE deployment of 2 replicas of the service, funded and started. */
    const started = async (...more: string[]) => {
      const args = ['--file', 'svc.json', '--strategy', 'INFINITE', '--replicas', '2', '--timeout', '60m', ...more]
      const created = await json(['deployment', 'create', ...args])
      await json(['deployment', 'fund', created.id, '--sol', '0.2', '--tokens', '20'])
      await json(['deployment', 'start', created.id])
      return created
    }
    const d = await started('--time-scale', '90')
    const host = `${d.id.toLowerCase()}.deploy.localhost`
    const count = async (type: string) =>
      (await deploymentEvents(manager, owner, d.id)).filter((e) => e.type === type).length
    const until = async (what: string, ms: number, done: () => Promise<boolean>) => {
      const end = Date.now() + ms
      while (!(await done())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
        await sleep(250)
      }
    }
    await until('both replicas serving', 90_000, async () => {
      const jobs = await deploymentJobs(manager, owner, d.id)
      const answers = await Promise.all([0, 1, 2, 3].map(() => getThrough(port, host).catch(() => null)))
      return jobs.filter((j) => j.state === 'RUNNING').length === 2 && answers.every((a) => a?.status === 200)
    })

    // Steady: both replicas up, before the first rotation (listed ~27 s after they started).
    const steady = loopOnStableUrl(port, host, 'ok', 10)
    await sleep(8000)
    await steady.stop()
    // Through two rotations of each replica.
    const rotating = loopOnStableUrl(port, host, 'ok', 10)
    const rotatedBefore = await count('JOB_ROTATED')
    await until('four rotations', 150_000, async () => (await count('JOB_ROTATED')) >= rotatedBefore + 4)
    await rotating.stop()

    await json(['deployment', 'stop', d.id, '--yes'])

    // A replica killed, on a deployment at time_scale 1 (no rotation meanwhile; the manager polls every 5 s): the time
    // until a job listed after it serves at its own URL, the stable URL looped throughout.
    const h = await started()
    const healHost = `${h.id.toLowerCase()}.deploy.localhost`
    await until('both replicas serving', 90_000, async () => {
      const jobs = await deploymentJobs(manager, owner, h.id)
      const answers = await Promise.all([0, 1, 2, 3].map(() => getThrough(port, healHost).catch(() => null)))
      return jobs.filter((j) => j.state === 'RUNNING').length === 2 && answers.every((a) => a?.status === 200)
    })
    const healing = loopOnStableUrl(port, healHost, 'ok', 10)
    await sleep(2000)
    const before = new Set((await deploymentJobs(manager, owner, h.id)).map((j) => j.job))
    const pid = execFileSync('pgrep', ['-f', '^httpd -f -p 8080 -h /tmp/benchsvc'], {encoding: 'utf8'})
      .trim()
      .split('\n')[0]!
    const killedAt = performance.now()
    process.kill(Number(pid), 'SIGKILL')
    let replacedMs = 0
    await until('the replacement serving', 120_000, async () => {
      const fresh = (await deploymentJobs(manager, owner, h.id)).filter(
        (j) => !before.has(j.job) && j.state === 'RUNNING',
      )
      for (const job of fresh) {
        const own = await getThrough(port, `${job.job.toLowerCase()}.node.localhost`).catch(() => null)
        if (own?.status === 200 && own.body.trim() === 'ok') {
          replacedMs = performance.now() - killedAt
          return true
        }
      }
      return false
    })
    await sleep(2000)
    await healing.stop()
    await json(['deployment', 'stop', h.id, '--yes'])

    const row = (name: string, c: StableUrlClient) =>
      `  ${name.padEnd(22)} n=${String(c.ok + c.failures.length).padEnd(6)} failed ${String(c.failures.length).padEnd(3)} ` +
      `p50 ${percentile(c.latencies, 50).toFixed(1)} ms  p95 ${percentile(c.latencies, 95).toFixed(1)} ms  p99 ${percentile(c.latencies, 99).toFixed(1)} ms`
    process.stdout.write('stable URL of an INFINITE deployment, 2 replicas of 40 s jobs, 4 nodes, podman\n')
    process.stdout.write(
      `${row('steady', steady)}\n${row('through 4 rotations', rotating)}\n${row('a replica killed', healing)}\n`,
    )
    const ratio = (c: StableUrlClient, p: number) =>
      (percentile(c.latencies, p) / percentile(steady.latencies, p)).toFixed(2)
    process.stdout.write(
      `  ratio to steady: rotations p50 ${ratio(rotating, 50)}x p99 ${ratio(rotating, 99)}x; ` +
        `replacement p50 ${ratio(healing, 50)}x p99 ${ratio(healing, 99)}x\n`,
    )
    process.stdout.write(
      `  a replica's death to its replacement serving: ${(replacedMs / 1000).toFixed(1)} s (time_scale 1: the manager polls every 5 s)\n`,
    )
    for (const failure of [...rotating.failures, ...healing.failures]) process.stdout.write(`  failed: ${failure}\n`)
  } finally {
    await box.cleanup()
  }
}

function spawnOk(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, {stdio: 'ignore'})
    return true
  } catch {
    return false
  }
}
