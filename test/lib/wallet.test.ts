import bs58 from 'bs58'
import {strict as assert} from 'node:assert'
import {stat, writeFile} from 'node:fs/promises'
import {join} from 'node:path'

import {verifySignature} from '../../src/lib/ed25519.js'
import {isGpunetError} from '../../src/lib/errors.js'
import {openWallet, resolveSettings, walletPath} from '../../src/lib/settings.js'
import {loadWallet, readKeypair} from '../../src/lib/wallet.js'
import {newWallet, tempDir} from '../helpers/secrets.js'

describe('wallet', () => {
  it('loads a Solana keypair file and signs as its address', async () => {
    const {dir, remove} = await tempDir()
    try {
      const source = newWallet()
      const file = join(dir, 'id.json')
      await writeFile(file, JSON.stringify([...source.bytes]))
      const wallet = await loadWallet({file})
      assert.equal(wallet.address, source.address)
      const message = new TextEncoder().encode('service_secret_1')
      assert.ok(verifySignature(wallet.sign(message), message, bs58.decode(wallet.address)))
      assert.ok(
        !verifySignature(
          wallet.sign(message),
          new TextEncoder().encode('service_secret_2'),
          bs58.decode(wallet.address),
        ),
      )
    } finally {
      await remove()
    }
  })

  it('reads a file holding a base58 secret key, and gives a web3.js Keypair of the same address', async () => {
    const {dir, remove} = await tempDir()
    try {
      const source = newWallet()
      const file = join(dir, 'id.b58')
      await writeFile(file, `${bs58.encode(source.bytes)}\n`)
      const wallet = await loadWallet({file})
      assert.equal(wallet.address, source.address)
      assert.equal(wallet.keypair().publicKey.toBase58(), source.address)
      assert.equal(readKeypair(file).publicKey.toBase58(), source.address)
      await writeFile(file, bs58.encode(source.bytes.subarray(0, 32)))
      await assert.rejects(loadWallet({file}), (error) => isGpunetError(error) && error.code === 'wallet_invalid')
    } finally {
      await remove()
    }
  })

  it('resolves --wallet, then GPUNET_WALLET, then the default path', () => {
    const env = {HOME: '/home/u', XDG_CONFIG_HOME: ''}
    const path = (flag: string | undefined, more: NodeJS.ProcessEnv = {}) =>
      walletPath(resolveSettings({flags: {wallet: flag}, env: {...env, ...more}}))
    assert.deepEqual(path('/a.json', {GPUNET_WALLET: '/b.json'}), {file: '/a.json', isDefault: false})
    assert.deepEqual(path(undefined, {GPUNET_WALLET: '/b.json'}), {file: '/b.json', isDefault: false})
    assert.deepEqual(path(undefined), {file: '/home/u/.config/gpunet/wallet.json', isDefault: true})
  })

  it('creates a missing default wallet with mode 0600 only when asked, never one named by --wallet', async () => {
    const {dir, remove} = await tempDir()
    try {
      const settings = resolveSettings({env: {HOME: dir}})
      await assert.rejects(
        openWallet(settings, {create: false}),
        (error) => isGpunetError(error) && error.code === 'wallet_unreadable',
      )
      const named = resolveSettings({flags: {wallet: join(dir, 'typo.json')}, env: {HOME: dir}})
      await assert.rejects(openWallet(named), (error) => isGpunetError(error) && error.code === 'wallet_unreadable')
      const notes: string[] = []
      const created = await openWallet(settings, {note: (line) => notes.push(line)})
      const file = join(dir, '.config', 'gpunet', 'wallet.json')
      assert.deepEqual(notes, [`created a new localnet wallet at ${file}`])
      assert.equal((await stat(file)).mode & 0o777, 0o600)
      assert.equal((await openWallet(settings, {create: false})).address, created.address)
    } finally {
      await remove()
    }
  })

  it('refuses files that are not keypairs, or whose halves do not match', async () => {
    const {dir, remove} = await tempDir()
    try {
      const file = join(dir, 'bad.json')
      await writeFile(file, '[1, 2, 3]')
      await assert.rejects(
        loadWallet({file}),
        (error) => isGpunetError(error) && error.code === 'wallet_invalid' && error.exitCode === 3,
      )
      const mismatched = [...newWallet().bytes.slice(0, 32), ...newWallet().bytes.slice(32)]
      await writeFile(file, JSON.stringify(mismatched))
      await assert.rejects(loadWallet({file}), /does not match/)
    } finally {
      await remove()
    }
  })
})
