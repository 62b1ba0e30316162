/** Signing legacy transactions with node:crypto's ed25519: no curve arithmetic in JavaScript, no re-verification. */
import type {KeyObject} from 'node:crypto'

import {
  type Keypair,
  type PublicKey,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js'

import {signingKey, signMessage} from '../../keys/ed25519.js'

/** Keys already made, by keypair (a web3.js Keypair never changes): the localnet's faucet signs every funding. */
const made = new WeakMap<Keypair, KeyObject>()

/** The signing key of each signer, by address; throws for a keypair whose halves do not match. */
export function signingKeys(signers: Keypair[]): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>()
  for (const signer of signers) {
    const key = made.get(signer) ?? signingKey(signer.secretKey)
    if (!key) throw new Error(`the keypair of ${signer.publicKey.toBase58()} does not match its secret key`)
    made.set(signer, key)
    keys.set(signer.publicKey.toBase58(), key)
  }
  return keys
}

/** The wire bytes of a legacy transaction of `instructions` paid by `payer`, signed by every signer it names. */
export function signedTransaction(
  payer: PublicKey,
  blockhash: string,
  instructions: TransactionInstruction[],
  keys: Map<string, KeyObject>,
): Buffer {
  const message = new TransactionMessage({
    payerKey: payer,
    recentBlockhash: blockhash,
    instructions,
  }).compileToLegacyMessage()
  const bytes = message.serialize()
  const signatures = message.accountKeys.slice(0, message.header.numRequiredSignatures).map((address) => {
    const key = keys.get(address.toBase58())
    if (!key) throw new Error(`no signer for ${address.toBase58()}`)
    return signMessage(bytes, key)
  })
  return Buffer.from(new VersionedTransaction(message, signatures).serialize())
}
