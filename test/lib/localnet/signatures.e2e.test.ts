import {ed25519, ED25519_TORSION_SUBGROUP} from '@noble/curves/ed25519'
import {strict as assert} from 'node:assert'

import {Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction} from '@solana/web3.js'

import {forgedSmallOrderSignature} from '../../helpers/ed25519.js'
import {fundedKeypair, useLocalnet} from '../../helpers/localnet.js'
import {rpc} from '../../helpers/json-rpc.js'

/** Sends wire bytes as a client would, answering the JSON-RPC error when the localnet refuses them. */
async function sendRaw(url: string, raw: Buffer): Promise<{code: number; message: string} | undefined> {
  const answer = await rpc(url, 'sendTransaction', [raw.toString('base64'), {encoding: 'base64'}])
  return answer.error
}

describe('localnet transaction signatures (strict ed25519)', function () {
  this.timeout(60_000)
  const t = useLocalnet()

  it('does not let a small-order key move SOL with a forged signature', async () => {
    for (const hex of ED25519_TORSION_SUBGROUP.slice(0, 2)) {
      const smallKey = new PublicKey(Buffer.from(hex, 'hex'))
      t.ln.node.fund(smallKey, {lamports: BigInt(LAMPORTS_PER_SOL)})
      const thief = Keypair.generate().publicKey
      const tx = new Transaction({feePayer: smallKey, ...(await t.connection.getLatestBlockhash())})
      tx.add(SystemProgram.transfer({fromPubkey: smallKey, toPubkey: thief, lamports: LAMPORTS_PER_SOL / 2}))
      const message = tx.serializeMessage()
      const forged = forgedSmallOrderSignature(smallKey.toBytes(), message)
      // Permissive verification (ZIP-215, no small-order check) would accept this transaction.
      assert.ok(ed25519.verify(forged, message, smallKey.toBytes(), {zip215: true}))
      tx.addSignature(smallKey, Buffer.from(forged))

      const error = await sendRaw(t.ln.runtime.rpcUrl, tx.serialize({verifySignatures: false}))
      assert.equal(error?.code, -32003, JSON.stringify(error))
      assert.match(error?.message ?? '', /signature verification failure/)
      assert.equal(await t.connection.getBalance(thief), 0)
      assert.equal(await t.connection.getBalance(smallKey), LAMPORTS_PER_SOL)
    }
  })

  it('refuses a transaction with several signers when one signature is bad', async () => {
    const payer = await fundedKeypair(t, 2)
    const owner = await fundedKeypair(t, 2)
    const to = Keypair.generate().publicKey
    const build = async () => {
      const tx = new Transaction({feePayer: payer.publicKey, ...(await t.connection.getLatestBlockhash())})
      tx.add(SystemProgram.transfer({fromPubkey: owner.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL}))
      return tx
    }
    const bad = await build()
    bad.sign(payer, owner)
    // The owner's signature over another message: well-formed, valid elsewhere, wrong here.
    const other = await build()
    other.add(SystemProgram.transfer({fromPubkey: owner.publicKey, toPubkey: to, lamports: 1}))
    other.sign(payer, owner)
    bad.addSignature(owner.publicKey, other.signatures[1]?.signature as Buffer)
    const error = await sendRaw(t.ln.runtime.rpcUrl, bad.serialize({verifySignatures: false}))
    assert.equal(error?.code, -32003, JSON.stringify(error))
    assert.equal(await t.connection.getBalance(to), 0)

    const good = await build()
    good.sign(payer, owner)
    const ok = await rpc(t.ln.runtime.rpcUrl, 'sendTransaction', [
      good.serialize().toString('base64'),
      {encoding: 'base64'},
    ])
    assert.equal(ok.error, undefined, JSON.stringify(ok.error))
  })
})
