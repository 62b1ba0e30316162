import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {runCli} from '../../helpers/cli.js'
import {useCliSandbox} from '../../helpers/cli-localnet.js'

describe('gpunet localnet fund', function () {
  this.timeout(60_000)
  const box = useCliSandbox()

  it('starts a localnet in the background when none runs, says so on stderr, and funds the wallet', async () => {
    const result = await box.run(['localnet', 'fund', '--tokens', '5'])
    assert.equal(result.code, 0, result.stderr)
    // the wallet is created (and said so) before the localnet's first start funds it
    assert.match(
      result.stderr,
      /^created a new localnet wallet at .*wallet\.json\nStarted a localnet in the background at http:\/\/127\.0\.0\.1:\d+ /,
    )
    // the first start gave the wallet 100 SOL and 1000 tokens
    assert.match(result.stdout, /Funded \w+ on localnet: \+0 SOL, \+5 tokens/)
    assert.match(result.stdout, /Balance +100 SOL, 1005 tokens/)
  })

  it('funds another address with SOL only, as one --json document', async () => {
    const address = Keypair.generate().publicKey.toBase58()
    const result = await box.run(['localnet', 'fund', address, '--sol', '1.5', '--json'])
    assert.equal(result.code, 0, result.stderr)
    // Nothing on stderr but, when this test runs alone, the notes of the localnet's start.
    const startNotes = /^(created a new localnet wallet|Started a localnet in the background) .*\n/gm
    assert.equal(result.stderr.replace(startNotes, ''), '')
    const report = JSON.parse(result.stdout) as {address: string; sol: unknown; tokens: unknown}
    assert.equal(report.address, address)
    // Amounts as everywhere else (docs/json.md): a number, its unit, and exact base units as a string.
    const sol = {amount: 1.5, unit: 'SOL', baseUnits: '1500000000'}
    assert.deepEqual(report.sol, {added: sol, balance: sol})
    const none = {amount: 0, unit: 'token', baseUnits: '0'}
    assert.deepEqual(report.tokens, {added: none, balance: none})
  })

  it('reports a transfer the faucet cannot make with exit 5', async () => {
    const result = await box.run(['localnet', 'fund', Keypair.generate().publicKey.toBase58(), '--sol', '5000000000'])
    assert.equal(result.code, 5)
    assert.match(
      result.stderr,
      /Error: the faucet transfer failed: Transaction simulation failed: Error processing Instruction 1: custom program error: 0x1\n/,
    )
    assert.match(result.stderr, /Hint: Check the localnet with "gpunet localnet status"/)
    assert.equal(result.stdout, '')
  })

  it('refuses an unreadable wallet file with exit 3', async () => {
    const wallet = join(box.dir, 'broken-wallet.json')
    writeFileSync(wallet, 'not json')
    const result = await runCli(['localnet', 'fund', '--json'], {env: {...box.env, GPUNET_WALLET: wallet}})
    assert.equal(result.code, 3)
    const {error} = JSON.parse(result.stdout) as {error: {code: string; message: string; hint: string}}
    assert.equal(error.code, 'wallet_invalid')
    assert.match(error.message, /broken-wallet\.json is not a Solana keypair file/)
    assert.match(error.hint, /JSON array of 64 numbers/)
  })

  it('refuses a bad address, a bad amount and nothing to send with exit 2', async () => {
    const bad = await box.run(['localnet', 'fund', 'not-an-address'])
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /Error: "not-an-address" is not a Solana address/)
    const amount = await box.run(['localnet', 'fund', '--tokens', '1.1234567', '--json'])
    assert.equal(amount.code, 2)
    assert.deepEqual(JSON.parse(amount.stdout).error.code, 'invalid_amount')
    const huge = await box.run(['localnet', 'fund', '--tokens', '99999999999999999999'])
    assert.equal(huge.code, 2, huge.stderr)
    assert.equal(huge.stdout, '')
    assert.match(huge.stderr, /Error: token amount "99999999999999999999" is too large: at most 18446744073709\.551615/)
    const hugeSol = await box.run(['localnet', 'fund', '--sol', '18446744074', '--json'])
    assert.equal(hugeSol.code, 2)
    assert.deepEqual(JSON.parse(hugeSol.stdout).error, {
      code: 'amount_too_large',
      message: 'SOL amount "18446744074" is too large: at most 18446744073.709551615 fits in an account',
      hint: 'Amounts are u64 base units on chain; give a smaller amount.',
      amount: '18446744074',
    })
    const nothing = await box.run(['localnet', 'fund', '--sol', '0'])
    assert.equal(nothing.code, 2)
    assert.match(nothing.stderr, /nothing to send/)
  })
})
