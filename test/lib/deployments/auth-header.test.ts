import {strict as assert} from 'node:assert'

import {Keypair} from '@solana/web3.js'
import bs58 from 'bs58'

import {API_AUTH_MESSAGE, apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import {verifySignature} from '../../../src/lib/ed25519.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {newWallet} from '../../helpers/secrets.js'

describe('deployment API wallet headers (client side)', () => {
  it("puts the time now in the header by default, after the wallet's signature over the message alone", () => {
    const wallet = newWallet()
    const before = Date.now()
    const headers = apiAuthHeaders(wallet)
    const after = Date.now()
    assert.deepEqual(Object.keys(headers).sort(), ['authorization', 'x-user-id'])
    assert.equal(headers['x-user-id'], wallet.address)
    const [message, signature, time] = headers.authorization.split(':') as [string, string, string]
    assert.equal(message, API_AUTH_MESSAGE)
    assert.ok(Number(time) >= before && Number(time) <= after, time)
    assert.ok(verifySignature(bs58.decode(signature), Buffer.from(API_AUTH_MESSAGE), wallet.publicKey.toBytes()))
    assert.equal(apiAuthHeaders(wallet, {timed: false}).authorization, `${message}:${signature}`)
  })

  it('signs with a web3.js Keypair, or any signer called as a method', () => {
    const keypair = Keypair.generate()
    const fromKeypair = apiAuthHeaders(keypair, {nowMs: 1})
    assert.equal(fromKeypair['x-user-id'], keypair.publicKey.toBase58())
    const wallet = newWallet()
    const signer = {
      address: wallet.address,
      wallet,
      sign(message: Uint8Array) {
        return this.wallet.sign(message)
      },
    }
    assert.equal(apiAuthHeaders(signer, {nowMs: 1}).authorization, apiAuthHeaders(wallet, {nowMs: 1}).authorization)
  })

  it('refuses a Keypair whose public half is not its secret seed’s (exit 3)', () => {
    const bytes = Uint8Array.from(Keypair.generate().secretKey)
    bytes.set(Keypair.generate().publicKey.toBytes(), 32)
    const broken = {secretKey: bytes, publicKey: Keypair.generate().publicKey} as unknown as Keypair
    assert.throws(
      () => apiAuthHeaders(broken),
      (e: unknown) => e instanceof GpunetError && e.exitCode === ExitCode.INVALID_INPUT && e.code === 'wallet_invalid',
    )
  })
})
