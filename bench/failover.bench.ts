/**
 * Placement and failover against posting by price alone (docs/jobs.md, "Failover"): on a localnet of two markets
 * with skewed queues, the cheap one's node busy for long and the dearer one's for a short while, the time from
 * `job post` to the job RUNNING (`--wait-for running`, the command's wall clock) when posted to the cheapest market
 * by price alone, and when placed with `--queue-timeout 1m`: neither market has a free node, so placement picks the
 * cheap one too, and failover moves the job once its queue timeout has passed. The localnet's queueTimeoutScale (20)
 * makes that minute 3 s; the nodes' busy times are real seconds. The dearer node's 3 s start before the post and the
 * job's 3-s wait after it, so that node is free when the job moves (a loaded machine only makes the move later):
 * with a 5-s skew the job reached it while it was busy and ran out of markets (exit 3). Both ways run in turns
 * against the same localnet, each round starting from the same queues. Everything runs on 127.0.0.1 in a temp
 * directory.
 */
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../test/helpers/cli.js'
import {cliSandbox} from '../test/helpers/cli-localnet.js'

/** Seconds each market's node stays busy with the job before ours: the skew. */
const BUSY = {localnet: 24, fair: 3}
const ROUNDS = 2

const MARKETS = `markets:
  - slug: localnet
    type: COMMUNITY
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.0001
  - slug: fair
    type: COMMUNITY
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.0002
`

function definition(cmd: string[]): string {
  return JSON.stringify({
    version: '0.1',
    type: 'container',
    ops: [{id: 'run', type: 'container/run', args: {image: 'docker.io/library/ubuntu:24.04', cmd}}],
  })
}

export default async function bench(): Promise<void> {
  const box = cliSandbox()
  const markets = join(box.dir, 'skewed.yaml')
  writeFileSync(markets, MARKETS)
  const env = {...box.env, GPUNET_LOCALNET_MARKETS: markets, GPUNET_QUEUE_TIMEOUT_SCALE: '20'}
  const run = async (args: string[]) => {
    const result = await runCli(args, {env})
    if (result.code !== 0) throw new Error(`gpunet ${args.join(' ')}: exit ${result.code}\n${result.stderr}`)
    return result.stdout
  }
  try {
    await run(['localnet', 'start', '--detach', '--runtime', 'host'])
    const listed = JSON.parse(await run(['market', 'list', '--json'])) as {
      markets: {market: string; hostManager: {slug: keyof typeof BUSY}}[]
    }
    const address = Object.fromEntries(listed.markets.map((m) => [m.hostManager.slug, m.market])) as Record<
      keyof typeof BUSY,
      string
    >
    const job = join(box.dir, 'job.json')
    writeFileSync(job, definition(['echo', 'ran']))
    const blockers = Object.fromEntries(
      Object.entries(BUSY).map(([slug, seconds]) => {
        const file = join(box.dir, `busy-${slug}.json`)
        writeFileSync(file, definition(['sleep', String(seconds)]))
        return [slug, file]
      }),
    ) as Record<keyof typeof BUSY, string>

    /** Makes each market's node busy for its BUSY seconds; resolves once both run, with the jobs to wait for. */
    const skew = async (): Promise<string[]> =>
      Promise.all(
        (Object.keys(BUSY) as (keyof typeof BUSY)[]).map(async (slug) =>
          (
            await run([
              'job',
              'post',
              blockers[slug],
              '--market',
              address[slug],
              '--wait',
              '--wait-for',
              'running',
              '-q',
            ])
          ).trim(),
        ),
      )
    const ways = {
      'cheapest by price alone': ['--market', address.localnet],
      'placement + failover (--queue-timeout 1m)': ['--max-price', '1', '--queue-timeout', '1m'],
    }
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((w) => [w, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const [way, flags] of Object.entries(ways)) {
        const busy = await skew()
        const started = process.hrtime.bigint()
        await run(['job', 'post', job, ...flags, '--wait', '--wait-for', 'running', '--json'])
        times[way]!.push(Number(process.hrtime.bigint() - started) / 1e9)
        // The next round starts from the same queues: every node idle again.
        for (const blocker of busy) await run(['job', 'get', blocker, '--wait', '--wait-for', 'done'])
      }
    }
    const slowest = (values: number[]) => Math.max(...values)
    const byPrice = slowest(times['cheapest by price alone']!)
    process.stdout.write(
      `skewed queues: the cheap market's node busy ${BUSY.localnet} s, the dearer one's ${BUSY.fair} s; post to RUNNING, the slower of ${ROUNDS} runs\n`,
    )
    for (const [way, values] of Object.entries(times)) {
      const m = slowest(values)
      process.stdout.write(
        `${way.padEnd(44)} ${m.toFixed(1).padStart(6)} s  (${(m / byPrice).toFixed(2)}x price alone; runs ${values.map((v) => v.toFixed(1)).join(', ')})\n`,
      )
    }
  } finally {
    await box.cleanup()
  }
}
