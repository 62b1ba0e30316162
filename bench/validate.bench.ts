/**
 * Validation throughput, measured side by side in one run: validateJobDefinition (the compiled fast path, zod
 * for failures), the zod schema alone (what validateJobDefinition was before the fast path) and the network's
 * own validator (`@nosana/types`, typia code generated ahead of time), on the templates round-robin, a valid
 * 200-operation definition and invalid documents. Then parse + validate + lint of whole files, and the cold
 * start of `gpunet job validate <template>` as a ratio to `node -e 0` (and to another build's, when
 * GPUNET_BENCH_BASELINE names one: a checkout with `npm run build` done).
 */
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {validateJobDefinition as peerValidate} from '@nosana/types'

import {checkDefinitionText} from '../src/lib/definition/check.js'
import {validateJobDefinition, validateWithZod} from '../src/lib/definition/validate.js'
import {listTemplates} from '../src/lib/definition/templates.js'

const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))

type Validator = (value: unknown) => {success: boolean}

const VALIDATORS: [string, Validator][] = [
  ['gpunet', validateJobDefinition],
  ['zod only', validateWithZod],
  ['@nosana/types', peerValidate],
]

/**
 * Calls per CPU second (user + system time of this process), so the other processes of a shared machine
 * slow neither side; a few rounds, interleaved, and the median.
 */
function callsPerCpuSecond(work: (i: number) => unknown, ms = 250): number {
  const start = process.cpuUsage()
  const until = performance.now() + ms
  let count = 0
  while (performance.now() < until) for (let k = 0; k < 20; k++) work(count++)
  const used = process.cpuUsage(start)
  return count / ((used.user + used.system) / 1e6)
}

async function perSecond(work: (i: number) => Promise<unknown>, seconds = 1): Promise<number> {
  for (let i = 0; i < 200; i++) await work(i) // warm-up
  let count = 0
  const start = process.hrtime.bigint()
  const budget = BigInt(seconds * 1e9)
  while (process.hrtime.bigint() - start < budget) {
    for (let k = 0; k < 50; k++) await work(count++)
  }
  return count / (Number(process.hrtime.bigint() - start) / 1e9)
}

/** A definition valid under both schemas: no health checks, since the peer requires a member the spec lacks. */
function bigDefinition(ops: number): Record<string, unknown> {
  return {
    version: '0.1',
    type: 'container',
    global: {image: 'docker.io/library/ubuntu:24.04', env: {A: '1'}},
    ops: Array.from({length: ops}, (_, i) => ({
      id: `op-${i}`,
      type: 'container/run',
      args: {
        image: 'docker.io/library/ubuntu:24.04',
        cmd: ['/bin/bash', '-c', `echo step ${i}`],
        gpu: i % 2 === 0,
        env: {STEP: String(i), TOKEN: '%%secrets.TOKEN%%'},
        expose: [{port: 8000 + (i % 1000), type: 'api'}],
        resources: [{type: 'HF', repo: 'org/model', target: '/models'}],
      },
    })),
  }
}

/** One broken copy of a template per kind of mistake people make; each is invalid under both schemas. */
function invalidDocuments(template: Record<string, unknown>): unknown[] {
  const copy = () => structuredClone(template) as {ops: {id: unknown; type: unknown; args: Record<string, unknown>}[]}
  const edits: ((d: ReturnType<typeof copy>) => void)[] = [
    (d) => (d.ops[0]!.args.imgae = d.ops[0]!.args.image),
    (d) => delete d.ops[0]!.args.image,
    (d) => (d.ops[0]!.type = 'container/exec'),
    (d) => (d.ops[0]!.args.gpu = 'yes'),
    (d) => (d.ops[0]!.args.cmd = 42),
    (d) => d.ops.push(structuredClone(d.ops[0]!)), // a duplicate operation id
    (d) => Object.assign(d, {version: 0.1}),
    (d) => (d.ops[0]!.args.env = ['A=1']),
  ]
  return edits.map((edit) => {
    const doc = copy()
    edit(doc)
    return doc
  })
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/**
 * Measures every validator on `corpus` round-robin, interleaved, and prints ops/s and the ratios; `target`
 * is the least gpunet/peer ratio asked for, when there is one.
 */
function compare(label: string, corpus: unknown[], expect: boolean | undefined, target?: number): void {
  for (const [name, validate] of VALIDATORS) {
    for (const value of corpus) {
      if (expect !== undefined && validate(value).success !== expect) {
        throw new Error(`${label}: ${name} does not find every document ${expect ? 'valid' : 'invalid'}`)
      }
    }
  }
  const rates = new Map<string, number[]>(VALIDATORS.map(([name]) => [name, []]))
  // The first rounds only warm up: zod's failure path takes a second or two to reach its speed.
  for (let round = -3; round < 6; round++) {
    // Each round starts with another validator: garbage one leaves is collected in whichever runs next.
    for (let k = 0; k < VALIDATORS.length; k++) {
      const [name, validate] = VALIDATORS[(round + 3 + k) % VALIDATORS.length]!
      const rate = callsPerCpuSecond((i) => validate(corpus[i % corpus.length]))
      if (round >= 0) rates.get(name)!.push(rate)
    }
  }
  const [ours, zod, peer] = VALIDATORS.map(([name]) => median(rates.get(name)!)) as [number, number, number]
  const ratio = ours / peer
  console.log(
    `${label.padEnd(44)} gpunet ${ours.toFixed(0).padStart(8)}/s  zod only ${zod.toFixed(0).padStart(8)}/s` +
      `  @nosana/types ${peer.toFixed(0).padStart(8)}/s  gpunet/peer ${ratio.toFixed(2)}x` +
      `  gpunet/zod only ${(ours / zod).toFixed(2)}x` +
      (target === undefined ? '' : `  (target >= ${target.toFixed(1)}x) ${ratio >= target ? 'OK' : 'BELOW TARGET'}`),
  )
}

/**
 * CPU time (user + system, ms) of this process's finished children, from Linux's /proc; undefined elsewhere.
 * Counted in clock ticks (10 ms), so it is summed over many runs; unlike wall time, other processes on the
 * machine barely change it.
 */
function childrenCpuMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[13]) + Number(fields[14])) * 10
  } catch {
    return undefined
  }
}

function timeRun(args: string[]): {wall: number; cpu: number} {
  const cpuBefore = childrenCpuMs() ?? Number.NaN
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, {stdio: 'ignore'})
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  return {wall: Number(process.hrtime.bigint() - start) / 1e6, cpu: (childrenCpuMs() ?? Number.NaN) - cpuBefore}
}

/** Runs the validation benchmark and prints its figures. */
export default async function run(): Promise<void> {
  const templates = await listTemplates()
  const values = await Promise.all(templates.map(async (t) => JSON.parse(await readFile(t.file, 'utf8'))))
  const texts = await Promise.all(templates.map((t) => readFile(t.file, 'utf8')))
  const big = bigDefinition(200)
  const bigText = JSON.stringify(big, null, 2)
  const invalid = values.flatMap((v) => invalidDocuments(v))
  const validForBoth = values.filter((v) => peerValidate(v).success)

  console.log(`validations per CPU second, median of 6 interleaved rounds (ratio >= 1.00: gpunet is faster)`)
  // The nesting limit must cost next to nothing (issue 43): 2x the peer on the corpus, 1.2x on 200 operations.
  compare(`${values.length} templates round-robin (peer: ${validForBoth.length} valid)`, values, undefined, 2)
  compare(`the ${validForBoth.length} templates valid under both`, validForBoth, true, 1)
  compare('valid 200-operation definition', [big], true, 1.2)
  compare(`${invalid.length} invalid documents round-robin`, invalid, false)

  const rrText = await perSecond((i) => checkDefinitionText(texts[i % texts.length] as string, 't.json'))
  const bigTextRate = await perSecond(() => checkDefinitionText(bigText, 'big.json'))
  console.log(`check (parse + validate + lint), templates round-robin: ${rrText.toFixed(0)} files/s`)
  console.log(
    `check (parse + validate + lint), 200 operations (${(bigText.length / 1024).toFixed(0)} KiB): ${bigTextRate.toFixed(0)} files/s`,
  )

  const template = templates.find((t) => t.name === 'hello-world')?.file as string
  const baseline = process.env.GPUNET_BENCH_BASELINE
  const commands: [string, string[]][] = [
    ['node -e 0', ['-e', '0']],
    ['gpunet job validate', [BIN, 'job', 'validate', template]],
    ...(baseline ? [['baseline job validate', [join(baseline, 'bin/run.js'), 'job', 'validate', template]]] : []),
  ] as [string, string[]][]
  const runs = 20
  const wall = commands.map(() => [] as number[])
  const cpu = commands.map(() => 0)
  for (const [, args] of commands) timeRun(args)
  for (let i = 0; i < runs; i++) {
    // Interleaved, so every command sees the same machine load.
    commands.forEach(([, args], k) => {
      const t = timeRun(args)
      wall[k]!.push(t.wall)
      cpu[k]! += t.cpu / runs
    })
  }
  const medians = wall.map(median)
  const describe = (k: number) => `${commands[k]![0]} ${medians[k]!.toFixed(0)} ms (CPU ${cpu[k]!.toFixed(0)} ms)`
  console.log(`cold start, median of ${runs} (mean CPU time): ${commands.map((_, k) => describe(k)).join(', ')}`)
  const ratio = medians[1]! / medians[0]!
  console.log(`cold start ratio gpunet/node: ${ratio.toFixed(2)}x (target <= 3x) ${ratio <= 3 ? 'OK' : 'OVER TARGET'}`)
  if (baseline) {
    console.log(
      `cold start, this build / baseline: ${(medians[1]! / medians[2]!).toFixed(3)}x wall, ` +
        `${(cpu[1]! / cpu[2]!).toFixed(3)}x CPU (target <= 1.00x: the fast path must not slow the start)`,
    )
  }
}
