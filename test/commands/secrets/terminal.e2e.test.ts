import {strict as assert} from 'node:assert'

import {runCli} from '../../helpers/cli.js'
import {cliFixture} from '../../helpers/secrets.js'
import {describeAtTerminal, runInTerminal} from '../../helpers/terminal.js'

describeAtTerminal('gpunet secrets at a terminal', () => {
  let f: Awaited<ReturnType<typeof cliFixture>>
  before(async () => {
    f = await cliFixture()
  })
  after(async () => f.stop())

  async function store(name: string, value: string): Promise<void> {
    assert.equal((await runCli(['secrets', 'set', name], {env: f.env, stdin: value})).code, 0)
  }

  it('asks for the value without echoing it', async () => {
    const result = await runInTerminal(['secrets', 'set', 'TYPED'], f.env, 'Value for TYPED:', 'typed-secret\r')
    assert.equal(result.code, 0, result.output)
    assert.ok(!result.output.includes('typed-secret'), result.output)
    assert.equal((await runCli(['secrets', 'get', 'TYPED'], {env: f.env})).stdout, 'typed-secret')
  })

  it('ends a printed value with a newline at a terminal', async () => {
    await store('PRINTED', 'printed-secret')
    const result = await runInTerminal(['secrets', 'get', 'PRINTED'], f.env)
    assert.equal(result.output, 'printed-secret\r\n')
  })

  it('Ctrl+C or Ctrl+D at the hidden prompt: "Cancelled.", exit 130, nothing stored', async () => {
    for (const key of ['\x03', '\x04']) {
      const result = await runInTerminal(['secrets', 'set', 'NEVER'], f.env, 'Value for NEVER:', key)
      assert.equal(result.code, 130, JSON.stringify(result.output))
      assert.match(result.output, /^Value for NEVER: \r\nCancelled\.\r\n$/)
      assert.doesNotMatch(result.output, /unexpected|report it/)
    }
    assert.equal((await runCli(['secrets', 'get', 'NEVER'], {env: f.env})).code, 7)
  })

  it('asks before deleting: keeps the secret on "n", Ctrl+C or Ctrl+D (exit 130) and deletes it on "y"', async () => {
    await store('DOOMED', 'v')
    const no = await runInTerminal(['secrets', 'delete', 'DOOMED'], f.env, '[y/N]', 'n\r')
    assert.equal(no.code, 130)
    assert.match(no.output, /Delete the secret DOOMED on localnet\? \[y\/N\]/)
    assert.match(no.output, /Cancelled: nothing was deleted\./)
    for (const key of ['\x03', '\x04']) {
      const cancelled = await runInTerminal(['secrets', 'delete', 'DOOMED', '--json'], f.env, '[y/N]', key)
      assert.equal(cancelled.code, 130, JSON.stringify(cancelled.output))
      assert.match(cancelled.output, /"code": "cancelled"/)
      assert.match(cancelled.output, /"message": "Cancelled\."/)
    }
    assert.equal((await runCli(['secrets', 'get', 'DOOMED'], {env: f.env})).code, 0)
    const yes = await runInTerminal(['secrets', 'delete', 'DOOMED'], f.env, '[y/N]', 'y\r')
    assert.equal(yes.code, 0, yes.output)
    assert.equal((await runCli(['secrets', 'get', 'DOOMED'], {env: f.env})).code, 7)
  })

  it('does not ask with --yes', async () => {
    await store('QUIET', 'v')
    const result = await runInTerminal(['secrets', 'delete', 'QUIET', '--yes'], f.env)
    assert.equal(result.code, 0)
    assert.ok(!result.output.includes('[y/N]'))
  })
})
