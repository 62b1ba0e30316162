/**
 * Cold start of `gpunet --version` and `gpunet job validate <template>` as ratios to `node -e 0` (target <= 2x),
 * all interleaved in one run. Beside them: `job:validate`, the same command through oclif (what a command line the
 * start-up path leaves to oclif costs); on Node 22.1+ the commands without the module compile cache; and with
 * GPUNET_BENCH_BASELINE naming another built checkout (`npm run build` done there, e.g. main before a change), its
 * commands: the "before" beside this build's "after".
 *
 * When NODE_EXTRA_CA_CERTS is set, Node 20 loads that file at every start, before any script (about 35 ms on the
 * development machines, more than the rest of `node -e 0`). That inflates the baseline and flatters every ratio, so
 * the run is repeated without it, and the target is judged in both environments.
 */
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TEMPLATE = join(ROOT, 'job-templates/hello-world.json')
const TARGET = 2
const RUNS = 15

interface Case {
  name: string
  args: string[]
  env?: NodeJS.ProcessEnv
  /** Held to the target. */
  target?: boolean
}

function commandsOf(label: string, root: string, options: {env?: NodeJS.ProcessEnv; target?: boolean} = {}): Case[] {
  const bin = join(root, 'bin/run.js')
  return [
    {name: `${label} --version`, args: [bin, '--version'], ...options},
    {name: `${label} job validate`, args: [bin, 'job', 'validate', TEMPLATE], ...options},
  ]
}

function timeRun({args, env}: Case, base: NodeJS.ProcessEnv): number {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, {stdio: 'ignore', env: {...base, ...env}})
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  return Number(process.hrtime.bigint() - start) / 1e6
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/** Measures every case interleaved in one environment and prints the medians and ratios. */
function measure(label: string, cases: Case[], base: NodeJS.ProcessEnv): void {
  const times = cases.map(() => [] as number[])
  for (const c of cases) timeRun(c, base)
  for (let i = 0; i < RUNS; i++) {
    // Interleaved, so every command sees the same machine load.
    cases.forEach((c, k) => times[k]!.push(timeRun(c, base)))
  }
  const bare = median(times[0]!)
  console.log(`${label}: Node ${process.version}, median of ${RUNS} runs each; node -e 0: ${bare.toFixed(0)} ms`)
  cases.slice(1).forEach((c, k) => {
    const ms = median(times[k + 1]!)
    const ratio = ms / bare
    const verdict = c.target ? ` (target <= ${TARGET}x) ${ratio <= TARGET ? 'OK' : 'OVER TARGET'}` : ''
    console.log(`  cold start ${c.name}: ${ms.toFixed(0)} ms, ${ratio.toFixed(2)}x node -e 0${verdict}`)
  })
}

/** Runs the cold start benchmark and prints its figures. */
export default async function run(): Promise<void> {
  const hasCompileCache = 'enableCompileCache' in (await import('node:module')).default
  const baseline = process.env.GPUNET_BENCH_BASELINE
  const cases: Case[] = [
    {name: 'node -e 0', args: ['-e', '0']},
    ...commandsOf('gpunet', ROOT, {target: true}),
    {name: 'gpunet job:validate (through oclif)', args: [join(ROOT, 'bin/run.js'), 'job:validate', TEMPLATE]},
    ...(hasCompileCache ? commandsOf('gpunet, no compile cache,', ROOT, {env: {NODE_DISABLE_COMPILE_CACHE: '1'}}) : []),
    ...(baseline ? commandsOf('baseline', baseline) : []),
  ]
  measure('environment as is', cases, process.env)
  if (process.env.NODE_EXTRA_CA_CERTS) {
    const clean = {...process.env}
    delete clean.NODE_EXTRA_CA_CERTS
    measure('without NODE_EXTRA_CA_CERTS', cases, clean)
  }
}
