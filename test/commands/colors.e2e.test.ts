import {strict as assert} from 'node:assert'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {runCli} from '../helpers/cli.js'

const ESC = '\u001B['
const red = (text: string) => `${ESC}31m${text}${ESC}39m`
const dim = (text: string) => `${ESC}2m${text}${ESC}22m`

describe('colors: NO_COLOR, FORCE_COLOR and pipes', () => {
  let dir: string
  let invalid: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpunet-colors-'))
    invalid = join(dir, 'job.json')
    await writeFile(invalid, '{"version":"0.1","type":"container","ops":[]}')
  })
  after(() => rm(dir, {recursive: true, force: true}))

  /** `job validate` of an invalid file (report on stdout) and a bad flag (error on stderr), under `env`. */
  const run = async (env: Record<string, string | undefined>) => {
    const report = await runCli(['job', 'validate', invalid], {env})
    const usage = await runCli(['job', 'validate', '--bogus'], {env})
    assert.equal(report.code, 3)
    assert.equal(usage.code, 2)
    return {stdout: report.stdout, stderr: usage.stderr}
  }

  it('colors stdout and stderr under FORCE_COLOR=1, even through a pipe', async () => {
    const {stdout, stderr} = await run({NO_COLOR: undefined, FORCE_COLOR: '1'})
    assert.ok(stdout.includes(`${red('✖')} ${invalid}: 1 error`), stdout)
    assert.ok(stdout.includes(`${ESC}36mops${ESC}39m`), stdout)
    assert.ok(stderr.startsWith(`${red('Error:')} unknown flag --bogus\n${dim('Hint:')} `), stderr)
  })

  it('writes no escape codes under NO_COLOR=1, even with a terminal-like TERM', async () => {
    const {stdout, stderr} = await run({NO_COLOR: '1', FORCE_COLOR: undefined, TERM: 'xterm-256color'})
    assert.ok(stdout.includes(`✖ ${invalid}: 1 error`), stdout)
    assert.ok(!stdout.includes(ESC) && !stderr.includes(ESC), stdout + stderr)
    assert.ok(stderr.startsWith('Error: unknown flag --bogus\nHint: '), stderr)
  })

  it('writes no escape codes to a pipe when neither is set', async () => {
    const {stdout, stderr} = await run({NO_COLOR: undefined, FORCE_COLOR: undefined, TERM: 'xterm-256color'})
    assert.ok(stdout.includes(`✖ ${invalid}: 1 error`), stdout)
    assert.ok(!stdout.includes(ESC) && !stderr.includes(ESC), stdout + stderr)
  })

  it('lets FORCE_COLOR win over NO_COLOR, as Node does', async () => {
    const {stdout} = await run({NO_COLOR: '1', FORCE_COLOR: '1'})
    assert.ok(stdout.includes(red('✖')), stdout)
  })
})
