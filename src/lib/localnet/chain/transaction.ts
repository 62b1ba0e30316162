/** A wire transaction as the localnet sees it: decoded once, signatures checked, accounts resolved. */
import {AddressLookupTableAccount, PublicKey, VersionedTransaction, type VersionedMessage} from '@solana/web3.js'

import {base58btc} from 'multiformats/bases/base58'

import {verifySignature} from '../../keys/ed25519.js'
import {checkTransactionLayout} from './wire.js'

export interface ResolvedAccount {
  pubkey: PublicKey
  isSigner: boolean
  isWritable: boolean
}

export interface DecodedTransaction {
  raw: Uint8Array
  /** The first signature, base58: the transaction's id. */
  signature: string
  message: VersionedMessage
  /** The signed message bytes. */
  messageBytes: Uint8Array
  signatures: Uint8Array[]
}

/** Thrown for bytes that are not a transaction. */
export class MalformedTransaction extends Error {}

/** Decodes wire bytes; throws MalformedTransaction. */
export function decodeTransaction(raw: Uint8Array): DecodedTransaction {
  let tx: VersionedTransaction
  try {
    checkTransactionLayout(raw)
    tx = VersionedTransaction.deserialize(raw)
  } catch (error) {
    throw new MalformedTransaction(`failed to deserialize transaction: ${(error as Error).message}`)
  }
  const first = tx.signatures[0]
  if (!first) throw new MalformedTransaction('transaction has no signatures')
  // The message follows the compact-u16 signature count and the signatures.
  const countLength = tx.signatures.length < 0x80 ? 1 : tx.signatures.length < 0x4000 ? 2 : 3
  return {
    raw,
    signature: base58btc.baseEncode(first),
    message: tx.message,
    messageBytes: raw.subarray(countLength + 64 * tx.signatures.length),
    signatures: tx.signatures,
  }
}

/** True when every required signature is present and valid (strict ed25519, see ed25519.ts) for the message. */
export function verifySignatures(tx: DecodedTransaction): boolean {
  const required = tx.message.header.numRequiredSignatures
  if (tx.signatures.length !== required) return false
  return tx.signatures.every((sig, i) => {
    const signer = tx.message.staticAccountKeys[i]
    if (!signer) return false
    return verifySignature(sig, tx.messageBytes, signer.toBytes())
  })
}

/** Every account the transaction uses, address lookup tables resolved, with its signer and writable flags. */
export function resolveAccounts(
  tx: DecodedTransaction,
  readTable: (key: PublicKey) => Uint8Array | null,
): ResolvedAccount[] {
  const message = tx.message
  const tables = message.addressTableLookups.map((lookup) => {
    const data = readTable(lookup.accountKey)
    if (!data) throw new MalformedTransaction(`address lookup table ${lookup.accountKey.toBase58()} not found`)
    return new AddressLookupTableAccount({key: lookup.accountKey, state: AddressLookupTableAccount.deserialize(data)})
  })
  const keys = message.getAccountKeys({addressLookupTableAccounts: tables})
  const all = [
    ...keys.staticAccountKeys,
    ...(keys.accountKeysFromLookups?.writable ?? []),
    ...(keys.accountKeysFromLookups?.readonly ?? []),
  ]
  return all.map((pubkey, i) => ({
    pubkey,
    isSigner: message.isAccountSigner(i),
    isWritable: message.isAccountWritable(i),
  }))
}
