import {strict as assert} from 'node:assert'
import {spawn, spawnSync} from 'node:child_process'

import {BIN, runCli} from '../../helpers/cli.js'
import {cliFixture} from '../../helpers/secrets.js'

const hasScript = spawnSync('script', ['--version']).status === 0
if (!hasScript)
  process.stderr.write('\n!!! SKIPPING the terminal tests of gpunet secrets: util-linux `script` is not installed.\n')

/**
 * Runs gpunet in a pseudo-terminal (util-linux `script`), typing `answer` once `prompt` shows, so the
 * terminal-only behaviour (hidden input, confirmation, trailing newline) is exercised as a person meets it.
 */
function runInTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  prompt?: string,
  answer?: string,
): Promise<{code: number | null; output: string}> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ')
  const child = spawn('script', ['-qec', command, '/dev/null'], {env: {...process.env, NO_COLOR: '1', ...env}})
  let output = ''
  let typed = false
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    output += d
    if (prompt && !typed && output.includes(prompt)) {
      typed = true
      child.stdin.write(`${answer}\r`)
    }
  })
  return new Promise((resolve) => child.on('close', (code) => resolve({code, output})))
}

;(hasScript ? describe : describe.skip)('gpunet secrets at a terminal', () => {
  let f: Awaited<ReturnType<typeof cliFixture>>
  before(async () => {
    f = await cliFixture()
  })
  after(async () => f.stop())

  it('asks for the value without echoing it', async () => {
    const result = await runInTerminal(['secrets', 'set', 'TYPED'], f.env, 'Value for TYPED:', 'typed-secret')
    assert.equal(result.code, 0, result.output)
    assert.ok(!result.output.includes('typed-secret'), result.output)
    assert.equal((await runCli(['secrets', 'get', 'TYPED'], {env: f.env})).stdout, 'typed-secret')
  })

  it('ends a printed value with a newline at a terminal', async () => {
    const result = await runInTerminal(['secrets', 'get', 'TYPED'], f.env)
    assert.equal(result.output, 'typed-secret\r\n')
  })

  it('asks before deleting, keeps the secret on "n" and deletes it on "y"', async () => {
    const no = await runInTerminal(['secrets', 'delete', 'TYPED'], f.env, '[y/N]', 'n')
    assert.equal(no.code, 1)
    assert.match(no.output, /Delete the secret TYPED on localnet\? \[y\/N\]/)
    assert.match(no.output, /nothing was deleted/)
    assert.equal((await runCli(['secrets', 'get', 'TYPED'], {env: f.env})).code, 0)
    const yes = await runInTerminal(['secrets', 'delete', 'TYPED'], f.env, '[y/N]', 'y')
    assert.equal(yes.code, 0, yes.output)
    assert.equal((await runCli(['secrets', 'get', 'TYPED'], {env: f.env})).code, 7)
  })

  it('does not ask with --yes', async () => {
    await runCli(['secrets', 'set', 'QUIET', '--value', 'v'], {env: f.env})
    const result = await runInTerminal(['secrets', 'delete', 'QUIET', '--yes'], f.env)
    assert.equal(result.code, 0)
    assert.ok(!result.output.includes('[y/N]'))
  })
})
