/**
 * The localnet node's results as the network's nodes write them (issue 19): a flow state that passes the schema
 * @nosana/types exports (checked with ajv), complete output up to the network's line cap with the cut stated,
 * a job stopped while running keeping its output (recorded with `complete`), and a job that reaches its timeout
 * recorded as the network's nodes record it (`success`, `jobExpired`).
 */
import {Ajv} from 'ajv'
import {strict as assert} from 'node:assert'
import {execFileSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../helpers/cli-localnet.js'
import {eventually} from '../helpers/eventually.js'
import {requirePodman, TEST_IMAGE} from '../helpers/podman.js'

interface Report {
  job: string
  status: string
  outcome: string | null
  result: string | null
  resultContent: unknown
  resultView: {ops: {id: string; status: string; droppedLines: number; logs: unknown[]}[]} | null
}

/**
 * The schemas @nosana/types exports (`jobSchemas`), read in a child process: loading that package here changes
 * which @solana/* copies the official kit's tests later get, and breaks their RPC calls.
 */
function officialSchemas(): {components: {schemas: Record<string, object>}} {
  const script = 'import("@nosana/types").then((m) => process.stdout.write(JSON.stringify(m.jobSchemas)))'
  return JSON.parse(execFileSync(process.execPath, ['-e', script], {encoding: 'utf8'})) as never
}

const printLines = (count: number, prefix: string) =>
  `i=0; while [ $i -lt ${count} ]; do echo ${prefix}$i; i=$((i+1)); done`

describe('the localnet node writes flow states', function () {
  this.timeout(180_000)
  requirePodman()
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  const cli = (args: string[]) => runCli(args, {env})
  const json = async (args: string[]): Promise<Report> => {
    const result = await cli([...args, '--json'])
    assert.ok(result.code === 0 || result.code === 8, `${args.join(' ')}: ${result.stderr}${result.stdout}`)
    return JSON.parse(result.stdout) as Report
  }
  const post = (name: string, ops: {id: string; cmd: string}[]) => {
    const file = join(box.dir, `${name}.json`)
    const definition = {
      version: '0.1',
      type: 'container',
      ops: ops.map(({id, cmd}) => ({id, type: 'container/run', args: {image: TEST_IMAGE, cmd: ['sh', '-c', cmd]}})),
    }
    writeFileSync(file, JSON.stringify(definition))
    return file
  }

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    env = {...box.env, GPUNET_NODE_PULL: 'never'}
    const started = await cli(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
  })
  after(() => box?.cleanup())

  it("keeps 5 x 20,000 lines whole, states the cut past 24,999, and passes @nosana/types' flow-state schema", async () => {
    const ops = Array.from({length: 5}, (_, i) => ({id: `op${i}`, cmd: printLines(20_000, `op${i}-line`)}))
    ops.push({id: 'long', cmd: printLines(26_000, 'long-')})
    const file = post('many', ops)
    const report = await json(['job', 'post', '--file', file, '--timeout', '600', '--wait', '--wait-timeout', '150'])
    assert.equal(report.outcome, 'succeeded')

    const ajv = new Ajv({strict: false})
    ajv.addSchema({components: officialSchemas().components}, 'nosana')
    const validate = ajv.compile({$ref: 'nosana#/components/schemas/FlowState'})
    assert.ok(validate(report.resultContent), JSON.stringify(validate.errors?.slice(0, 3)))

    const out = join(box.dir, 'out')
    const written = await cli(['job', 'get', report.job, '--out', out])
    assert.equal(written.code, 0, written.stderr)
    for (let i = 0; i < 5; i++) {
      const lines = readFileSync(join(out, `op${i}.stdout.log`), 'utf8')
        .split('\n')
        .filter(Boolean)
      assert.equal(lines.length, 20_000, `op${i}`)
      assert.deepEqual([lines[0], lines.at(-1)], [`op${i}-line0`, `op${i}-line19999`])
    }
    const long = report.resultView!.ops.find((op) => op.id === 'long')!
    assert.equal(long.droppedLines, 26_000 - 24_999)
    assert.equal(long.logs.length, 24_999)
    assert.equal(readFileSync(join(out, 'long.stdout.log'), 'utf8').split('\n')[0], 'long-1001')
    assert.match(
      written.stdout,
      /^Operation long \(success, exit code 0\)\n\[1001 earlier lines dropped by the node\]\n {2}long-1001$/m,
    )
  })

  it("a job that reaches its timeout is recorded as the network's nodes record it, and job get --wait exits 0 saying so", async () => {
    const file = post('expires', [{id: 'talk', cmd: `${printLines(3, 'before-end-')}; sleep 600`}])
    const posted = await json(['job', 'post', '--file', file, '--timeout', '5'])
    const waited = await cli(['job', 'get', posted.job, '--wait', '--wait-timeout', '60'])
    assert.equal(waited.code, 0, `a job that ran until its timeout is done, as the network counts it: ${waited.stderr}`)
    assert.match(waited.stdout, /^ {2}Outcome +succeeded \(it ran until its timeout\)$/m)
    assert.match(waited.stdout, /^ {2}before-end-0\n {2}before-end-1\n {2}before-end-2$/m)
    const report = (await json(['job', 'get', posted.job])) as Report & {timedOut: boolean; failure: unknown}
    assert.deepEqual(
      [report.status, report.outcome, report.failure, report.timedOut],
      ['COMPLETED', 'succeeded', null, true],
    )

    const ajv = new Ajv({strict: false})
    ajv.addSchema({components: officialSchemas().components}, 'nosana')
    const validate = ajv.compile({$ref: 'nosana#/components/schemas/FlowState'})
    assert.ok(validate(report.resultContent), JSON.stringify(validate.errors?.slice(0, 3)))
    // What nosana-ci/nosana-cli writes for an expired job: getStatus maps `expired` to `success` for the flow and
    // its operations; runTaskManagerOperation gives an aborted operation this reason; no error entry.
    const document = report.resultContent as {status: string; errors?: unknown[]; opStates: Record<string, unknown>[]}
    assert.equal(document.status, 'success')
    assert.deepEqual(document.errors ?? [], [])
    assert.equal(document.opStates[0]!.status, 'success')
    assert.deepEqual((document.opStates[0]!.diagnostics as {reason: unknown}).reason, {
      hostShutDown: false,
      jobStopped: false,
      jobExpired: true,
      reason: 'Operation stopped due to flow expired',
    })
  })

  it('a job stopped while it runs keeps its output: the node records it with `complete`', async () => {
    const file = post('stopped', [{id: 'talk', cmd: `${printLines(3, 'before-stop-')}; sleep 60`}])
    const posted = await json(['job', 'post', '--file', file, '--timeout', '600', '--wait-for', 'running'])
    await eventually('the lines before the stop', 30_000, async () =>
      (await cli(['job', 'logs', posted.job])).stdout.includes('before-stop-2') ? true : undefined,
    )
    const stopped = await cli(['job', 'stop', posted.job])
    assert.equal(stopped.code, 0, stopped.stderr)
    let report: Report | undefined
    for (let i = 0; i < 100 && !report?.result; i++) {
      report = await json(['job', 'get', posted.job])
      if (!report.result) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.ok(report?.result, 'the node recorded a result after the stop')
    assert.equal(report.status, 'COMPLETED')
    assert.equal(report.outcome, 'stopped')
    assert.equal(report.resultView!.ops[0]!.status, 'stopped')
    const human = await cli(['job', 'get', posted.job])
    assert.match(human.stdout, /^ {2}before-stop-0\n {2}before-stop-1\n {2}before-stop-2$/m)
    const waited = await cli(['job', 'get', posted.job, '--wait'])
    assert.equal(waited.code, 9, 'a stopped job is no success for --wait: exit 9, stopped')
  })
})
