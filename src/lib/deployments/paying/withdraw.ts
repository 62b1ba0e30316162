/**
 * Withdraw: one transaction that returns everything a vault holds to its owner: every token (then the emptied token
 * account is closed, its rent to the owner) and every lamport. The owner pays the fee, so nothing stays behind; the
 * vault signs here, the owner co-signs and sends it, as with the network's manager.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createTransferInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token'
import {type Keypair, type PublicKey, SystemProgram, Transaction, type TransactionInstruction} from '@solana/web3.js'

import {readBalances} from '../../market/rpc/balances.js'
import type {MarketNetwork} from '../../market/connect.js'
import {rpcCall} from '../../market/rpc/rpc.js'

/** The withdraw transaction, signed by the vault, base64; null when the vault holds nothing. */
export async function withdrawTransaction(
  net: MarketNetwork,
  vault: Keypair,
  owner: PublicKey,
): Promise<string | null> {
  const {connection} = net
  const [balances, latest] = await Promise.all([
    rpcCall(connection, () => readBalances(connection, vault.publicKey, net.mint)),
    rpcCall(connection, () => connection.getLatestBlockhash('confirmed')),
  ])
  const instructions: TransactionInstruction[] = []
  if (balances.hasTokenAccount) {
    const ownerTokens = getAssociatedTokenAddressSync(net.mint, owner, true)
    instructions.push(createAssociatedTokenAccountIdempotentInstruction(owner, ownerTokens, owner, net.mint))
    if (balances.tokens > 0n) {
      instructions.push(createTransferInstruction(balances.tokenAccount, ownerTokens, vault.publicKey, balances.tokens))
    }
    instructions.push(createCloseAccountInstruction(balances.tokenAccount, owner, vault.publicKey))
  }
  if (balances.lamports > 0n) {
    instructions.push(
      SystemProgram.transfer({fromPubkey: vault.publicKey, toPubkey: owner, lamports: balances.lamports}),
    )
  }
  if (instructions.length === 0) return null
  const tx = new Transaction({feePayer: owner, ...latest}).add(...instructions)
  tx.partialSign(vault)
  return tx.serialize({requireAllSignatures: false}).toString('base64')
}
