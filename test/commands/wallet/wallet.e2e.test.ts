/** `gpunet wallet address|balance|new|import` through the built CLI, with keys made by web3.js, not by gpunet. */
import {Keypair} from '@solana/web3.js'
import bs58 from 'bs58'
import {strict as assert} from 'node:assert'
import {existsSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, useCliSandbox} from '../../helpers/cli-localnet.js'

interface Written {
  address: string
  file: string
  backup: string | null
}

describe('gpunet wallet', function () {
  this.timeout(60_000)
  const box: CliSandbox = useCliSandbox()
  const cli = (args: string[], stdin?: string) => runCli(args, {env: box.env, stdin})
  const path = (name: string) => join(box.dir, name)
  const json = async <T = Written>(args: string[], stdin?: string): Promise<T> => {
    const result = await cli([...args, '--json'], stdin)
    assert.equal(result.code, 0, result.stderr + result.stdout)
    return JSON.parse(result.stdout) as T
  }

  it('imports a Solana CLI keypair file, written 0600, and `address` prints its public key', async () => {
    const keypair = Keypair.generate()
    writeFileSync(path('id.json'), JSON.stringify([...keypair.secretKey]))
    const imported = await json(['wallet', 'import', path('id.json'), '--wallet', path('imported.json')])
    assert.equal(imported.address, keypair.publicKey.toBase58())
    assert.equal(statSync(path('imported.json')).mode & 0o777, 0o600)
    const address = await cli(['wallet', 'address', '--wallet', path('imported.json')])
    assert.equal(address.stdout, `${keypair.publicKey.toBase58()}\n`)
  })

  it('imports a base58 secret key from standard input, and never prints it', async () => {
    const keypair = Keypair.generate()
    const secret = bs58.encode(keypair.secretKey)
    const result = await cli(['wallet', 'import', '--wallet', path('stdin.json')], `${secret}\n`)
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, new RegExp(keypair.publicKey.toBase58()))
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(secret))
    assert.deepEqual(JSON.parse(readFileSync(path('stdin.json'), 'utf8')), [...keypair.secretKey])
  })

  it('refuses a keypair whose halves do not match (exit 3), writing nothing', async () => {
    const bytes = Keypair.generate().secretKey
    bytes.set(Keypair.generate().publicKey.toBytes(), 32)
    const result = await cli(['wallet', 'import', '--wallet', path('mismatch.json')], bs58.encode(bytes))
    assert.equal(result.code, 3)
    assert.match(result.stderr, /standard input is not a valid keypair: its public key does not match its secret key/)
    assert.equal(existsSync(path('mismatch.json')), false)
  })

  it('refuses a key given as an argument (exit 2), and says to clear it from history', async () => {
    const secret = bs58.encode(Keypair.generate().secretKey)
    const result = await cli(['wallet', 'import', secret, '--wallet', path('argument.json')])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /looks like a secret key, not a file/)
    assert.doesNotMatch(result.stderr, new RegExp(secret))
    assert.equal(existsSync(path('argument.json')), false)
  })

  it('`new` never replaces a wallet without --force; with it, the old key is kept as a .bak copy', async () => {
    const first = await json(['wallet', 'new', '--wallet', path('new.json')])
    const before = readFileSync(path('new.json'), 'utf8')
    const again = await cli(['wallet', 'new', '--wallet', path('new.json')])
    assert.equal(again.code, 2)
    assert.match(again.stderr, /a wallet already exists at .*new\.json; it was left as it is/)
    const imported = await cli(
      ['wallet', 'import', '--wallet', path('new.json')],
      bs58.encode(Keypair.generate().secretKey),
    )
    assert.equal(imported.code, 2, 'import is refused the same way')
    assert.equal(readFileSync(path('new.json'), 'utf8'), before)

    const forced = await json(['wallet', 'new', '--wallet', path('new.json'), '--force'])
    assert.notEqual(forced.address, first.address)
    assert.ok(forced.backup)
    assert.equal(readFileSync(forced.backup, 'utf8'), before)
    assert.equal(statSync(forced.backup).mode & 0o777, 0o600)
    assert.equal(readdirSync(box.dir).filter((name) => name.startsWith('new.json.')).length, 1)
  })

  it('`address` of a missing wallet is exit 3 and creates nothing', async () => {
    const result = await cli(['wallet', 'address', '--wallet', path('missing.json')])
    assert.equal(result.code, 3)
    assert.match(result.stderr, /cannot read the wallet/)
    assert.equal(existsSync(path('missing.json')), false)
  })

  it('`balance` shows SOL and tokens with their units on the localnet', async () => {
    const report = await json<{
      network: string
      address: string
      sol: {unit: string}
      tokens: {amount: number; baseUnits: string; unit: string}
    }>(['wallet', 'balance'])
    assert.equal(report.network, 'localnet')
    assert.equal(report.sol.unit, 'SOL')
    assert.equal(report.tokens.unit, 'token')
    assert.equal(report.tokens.baseUnits, '1000000000', 'the first start funds the default wallet with 1000 tokens')
    const human = await cli(['wallet', 'balance'])
    assert.match(human.stdout, /^ {2}SOL +[\d.]+ SOL$/m)
    assert.match(human.stdout, /^ {2}Tokens +1000 tokens$/m)
    assert.match(human.stdout, new RegExp(`^ {2}Wallet +${report.address}$`, 'm'))
  })
})
