/**
 * Validation throughput (templates round-robin, a generated 200-operation definition) and the cold start of
 * `gpunet job validate <template>` as a ratio to `node -e 0`, both measured here in the same run.
 */
import {spawnSync} from 'node:child_process'
import {readFile} from 'node:fs/promises'
import {fileURLToPath} from 'node:url'

import {checkDefinitionText} from '../src/lib/definition/check.js'
import {validateJobDefinition} from '../src/lib/definition/validate.js'
import {listTemplates} from '../src/lib/templates.js'

const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))

async function perSecond(work: (i: number) => unknown, seconds = 1): Promise<number> {
  for (let i = 0; i < 200; i++) await work(i) // warm-up
  let count = 0
  const start = process.hrtime.bigint()
  const budget = BigInt(seconds * 1e9)
  while (process.hrtime.bigint() - start < budget) {
    for (let k = 0; k < 50; k++) await work(count++)
  }
  return count / (Number(process.hrtime.bigint() - start) / 1e9)
}

function bigDefinition(ops: number): unknown {
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
        expose: [
          {
            port: 8000 + (i % 1000),
            type: 'api',
            health_checks: [{type: 'http', path: '/health', method: 'GET', expected_status: 200}],
          },
        ],
        resources: [{type: 'HF', repo: 'org/model', target: '/models'}],
      },
    })),
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

function timeRun(args: string[]): number {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, {stdio: 'ignore'})
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  return Number(process.hrtime.bigint() - start) / 1e6
}

/** Runs the validation benchmark and prints its figures. */
export default async function run(): Promise<void> {
  const templates = await listTemplates()
  const values = await Promise.all(templates.map(async (t) => JSON.parse(await readFile(t.file, 'utf8'))))
  const texts = await Promise.all(templates.map((t) => readFile(t.file, 'utf8')))
  const big = bigDefinition(200)
  const bigText = JSON.stringify(big, null, 2)
  if (!validateJobDefinition(big).success) throw new Error('the generated definition should be valid')

  const rr = await perSecond((i) => validateJobDefinition(values[i % values.length]))
  const rrText = await perSecond((i) => checkDefinitionText(texts[i % texts.length] as string, 't.json'))
  const bigRate = await perSecond(() => validateJobDefinition(big))
  const bigTextRate = await perSecond(() => checkDefinitionText(bigText, 'big.json'))
  console.log(`validateJobDefinition, ${values.length} templates round-robin: ${rr.toFixed(0)} validations/s`)
  console.log(`check (parse + validate + lint), templates round-robin:        ${rrText.toFixed(0)} files/s`)
  console.log(`validateJobDefinition, 200-operation definition:     ${bigRate.toFixed(0)} validations/s`)
  console.log(
    `check (parse + validate + lint), 200 operations (${(bigText.length / 1024).toFixed(0)} KiB): ${bigTextRate.toFixed(0)} files/s`,
  )

  const template = templates.find((t) => t.name === 'hello-world')?.file as string
  const runs = 15
  const bare: number[] = []
  const cli: number[] = []
  timeRun(['-e', '0'])
  timeRun([BIN, 'job', 'validate', template])
  for (let i = 0; i < runs; i++) {
    // Interleaved, so both see the same machine load.
    bare.push(timeRun(['-e', '0']))
    cli.push(timeRun([BIN, 'job', 'validate', template]))
  }
  const ratio = median(cli) / median(bare)
  console.log(
    `cold start, median of ${runs}: node -e 0 ${median(bare).toFixed(0)} ms, gpunet job validate ${median(cli).toFixed(0)} ms`,
  )
  console.log(`cold start ratio gpunet/node: ${ratio.toFixed(2)}x (target <= 3x) ${ratio <= 3 ? 'OK' : 'OVER TARGET'}`)
}
