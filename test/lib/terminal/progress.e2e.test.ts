import {strict as assert} from 'node:assert'
import {execFileSync, spawn} from 'node:child_process'
import {once} from 'node:events'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {moduleLoadLog} from '../../helpers/module-log.js'

const ESC = '\u001B['
const PROGRESS = fileURLToPath(new URL('../../../src/lib/terminal/progress.ts', import.meta.url))

/** Runs a short progress display in a pseudo-terminal (util-linux `script`, 80 columns) and returns what it drew. */
async function drawInTerminal(env: Record<string, string | undefined>): Promise<string> {
  // Fixed waits in the child: ora loads lazily, then draws on its 80 ms timer; nothing there tells a frame is out.
  const script = `import {startProgress} from ${JSON.stringify(PROGRESS)}
    const progress = startProgress('Working')
    await new Promise((resolve) => setTimeout(resolve, 250))
    progress.update('Still working')
    await new Promise((resolve) => setTimeout(resolve, 250))
    progress.stop()`
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', script]
  const command = `stty cols 80 rows 24; ${node.map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ')}`
  // ora shows no spinner under CI; the pseudo-terminal must look like a person's.
  const childEnv: NodeJS.ProcessEnv = {...process.env, TERM: 'xterm-256color', ...env}
  delete childEnv.CI
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete childEnv[name]
  const child = spawn('script', ['-qec', command, '/dev/null'], {env: childEnv, stdio: ['ignore', 'pipe', 'inherit']})
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  const [code] = (await once(child, 'exit')) as [number]
  assert.equal(code, 0, out)
  return out
}

describe('progress at a terminal', function () {
  this.timeout(20_000)
  before(function () {
    try {
      execFileSync('script', ['--version'], {stdio: 'ignore'})
    } catch {
      this.skip()
    }
  })

  it('spins in color at a color terminal and under FORCE_COLOR=1', async () => {
    for (const env of [
      {NO_COLOR: undefined, FORCE_COLOR: undefined},
      {NO_COLOR: '1', FORCE_COLOR: '1'},
    ]) {
      const drawn = await drawInTerminal(env)
      assert.ok(drawn.includes(`${ESC}36m⠋${ESC}39m Working`), JSON.stringify(drawn))
      assert.ok(drawn.includes('Still working'), JSON.stringify(drawn))
    }
  })

  it('spins without a color code under NO_COLOR=1', async () => {
    const drawn = await drawInTerminal({NO_COLOR: '1', FORCE_COLOR: undefined})
    assert.ok(drawn.includes('⠋ Working'), JSON.stringify(drawn))
    assert.ok(drawn.includes('Still working'), JSON.stringify(drawn))
    assert.ok(!new RegExp(`${ESC.replace('[', '\\[')}\\d+m`).test(drawn), JSON.stringify(drawn))
  })
})

describe('progress without a terminal', () => {
  it('prints plain lines and never loads ora (whose string-width builds an Intl.Segmenter when it loads)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpunet-progress-'))
    try {
      // A module hook in the child records every module Node loads.
      const modules = moduleLoadLog(dir)
      const script = `import {startProgress} from ${JSON.stringify(PROGRESS)}
        const progress = startProgress('Working')
        progress.update('Working')
        progress.update('Still working')
        progress.stop()`
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', ...modules.importArgs, '--input-type=module', '-e', script],
        {stdio: ['ignore', 'ignore', 'pipe']},
      )
      let err = ''
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
      const [code] = (await once(child, 'exit')) as [number]
      assert.equal(code, 0, err)
      assert.equal(err, 'Working\nStill working\n')
      const loaded = modules.loaded()
      assert.ok(
        loaded.some((url) => url.endsWith('/src/lib/terminal/progress.ts')),
        'the hook saw the module',
      )
      assert.deepEqual(
        loaded.filter((url) => /\/node_modules\/(ora|string-width)\//.test(url)),
        [],
      )
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
