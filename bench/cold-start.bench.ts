/**
 * Cold start of `gpunet --version` and `gpunet job validate <template>` as ratios to `node -e 0` (target <= 2x),
 * all interleaved in one run. On Node 22.1+ the same commands also run with the module compile cache off
 * (NODE_DISABLE_COMPILE_CACHE=1), and with GPUNET_BENCH_BASELINE naming another built checkout (`npm run build`
 * done there, e.g. main before a change) its commands run too: the "before" beside this build's "after".
 */
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TEMPLATE = join(ROOT, 'job-templates/hello-world.json')
const TARGET = 2

interface Case {
  name: string
  args: string[]
  env?: NodeJS.ProcessEnv
}

function commandsOf(label: string, root: string, env?: NodeJS.ProcessEnv): Case[] {
  const bin = join(root, 'bin/run.js')
  return [
    {name: `${label} --version`, args: [bin, '--version'], env},
    {name: `${label} job validate`, args: [bin, 'job', 'validate', TEMPLATE], env},
  ]
}

function timeRun({args, env}: Case): number {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, {stdio: 'ignore', env: {...process.env, ...env}})
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  return Number(process.hrtime.bigint() - start) / 1e6
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/** Runs the cold start benchmark and prints its figures. */
export default async function run(): Promise<void> {
  const hasCompileCache = 'enableCompileCache' in (await import('node:module')).default
  const baseline = process.env.GPUNET_BENCH_BASELINE
  const cases: Case[] = [
    {name: 'node -e 0', args: ['-e', '0']},
    ...commandsOf('gpunet', ROOT),
    ...(hasCompileCache ? commandsOf('gpunet, no compile cache,', ROOT, {NODE_DISABLE_COMPILE_CACHE: '1'}) : []),
    ...(baseline ? commandsOf('baseline', baseline) : []),
  ]
  const runs = 15
  const times = cases.map(() => [] as number[])
  for (const c of cases) timeRun(c)
  for (let i = 0; i < runs; i++) {
    // Interleaved, so every command sees the same machine load.
    cases.forEach((c, k) => times[k]!.push(timeRun(c)))
  }
  const bare = median(times[0]!)
  console.log(`Node ${process.version}, median of ${runs} runs each; node -e 0: ${bare.toFixed(0)} ms`)
  cases.slice(1).forEach((c, k) => {
    const ms = median(times[k + 1]!)
    const ratio = ms / bare
    const mine = !c.env && !c.name.startsWith('baseline')
    const verdict = mine ? ` (target <= ${TARGET}x) ${ratio <= TARGET ? 'OK' : 'OVER TARGET'}` : ''
    console.log(`cold start ${c.name}: ${ms.toFixed(0)} ms, ${ratio.toFixed(2)}x node -e 0${verdict}`)
  })
}
