/**
 * `gpunet deployment serve`'s refusals before it listens or spends: a clear-text host, mainnet without a yes, hold
 * bounds out of range.
 */
import {strict as assert} from 'node:assert'

import {useCliSandbox} from '../helpers/cli-localnet.js'

describe('deployment serve: refusals', function () {
  this.timeout(60_000)
  const box = useCliSandbox()

  it('refuses a host beyond loopback without --tls-terminated (exit 2), naming the flag', async () => {
    const result = await box.run(['deployment', 'serve', '--host', '0.0.0.0', '--port', '0', '--json'])
    assert.equal(result.code, 2, result.stderr)
    const error = (JSON.parse(result.stdout) as {error: {code: string; hint: string}}).error
    assert.equal(error.code, 'tls_required')
    assert.match(error.hint, /--tls-terminated/)
  })

  it('on mainnet without a terminal, refuses to pay from vaults without --yes (exit 2)', async () => {
    const result = await box.run(['deployment', 'serve', '--network', 'mainnet', '--port', '0', '--json'])
    assert.equal(result.code, 2, result.stderr)
    assert.equal((JSON.parse(result.stdout) as {error: {code: string}}).error.code, 'confirmation_required')
  })

  it('on devnet without a content store, refuses to start: no definition could be uploaded (exit 2)', async () => {
    const result = await box.run(['deployment', 'serve', '--network', 'devnet', '--yes', '--port', '0', '--json'])
    assert.equal(result.code, 2, result.stderr)
    assert.equal((JSON.parse(result.stdout) as {error: {code: string}}).error.code, 'content_store_missing')
  })

  it('refuses hold bounds out of range before anything starts (exit 2), naming the range', async () => {
    for (const flags of [
      ['--max-held', '0'],
      ['--hold-timeout', '31m'],
      ['--hold-timeout', 'soon'],
    ]) {
      const result = await box.run(['deployment', 'serve', '--port', '0', ...flags, '--json'])
      assert.equal(result.code, 2, `${flags.join(' ')}: ${result.stderr}`)
      const error = (JSON.parse(result.stdout) as {error: {code: string; message: string}}).error
      assert.equal(error.code, 'invalid_hold', flags.join(' '))
      assert.match(error.message, /1 to 1000|1s to 30m/)
    }
  })
})
