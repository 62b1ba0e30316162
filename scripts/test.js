// `npm test`: the unit layer (stopping at its first failure), the build, then the end-to-end and chaos layers in
// parallel (docs/development.md, "Test layers"). Prints each step's time and the slowest files of the parallel run.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, relative} from 'node:path'

const SLOWEST = 10

const scratch = mkdtempSync(join(tmpdir(), 'gpunet-test-run-'))
const times = join(scratch, 'file-times.jsonl')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

const steps = [
  ['unit layer', ['run', '--silent', 'test:unit', '--', '--bail']],
  ['build', ['run', '--silent', 'build']],
  ['end-to-end and chaos layers', ['run', '--silent', 'test:e2e']],
]

/** The slowest files of the parallel run, from the times its workers wrote. */
function slowest() {
  let lines
  try {
    lines = readFileSync(times, 'utf8').trim().split('\n').filter(Boolean)
  } catch {
    return
  }
  const files = lines.map((line) => JSON.parse(line)).sort((a, b) => b.ms - a.ms)
  const rows = files
    .slice(0, SLOWEST)
    .map(({file, ms}) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(process.cwd(), file)}\n`)
  process.stdout.write(`\nThe ${rows.length} slowest of ${files.length} files run in parallel:\n${rows.join('')}`)
}

let status = 0
const report = []
for (const [name, args] of steps) {
  const started = Date.now()
  const run = spawnSync(npm, args, {stdio: 'inherit', env: {...process.env, GPUNET_TEST_TIMES: times}})
  report.push(`  ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  ${name}`)
  status = run.status ?? 1
  if (status !== 0) break
}
slowest()
process.stdout.write(`\nnpm test, step by step:\n${report.join('\n')}\n`)
rmSync(scratch, {recursive: true, force: true})
process.exit(status)
