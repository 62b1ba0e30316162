/**
 * Withdraw: one transaction that returns the amounts floor.ts allowed to the vault's owner: tokens (and, once the
 * token account is emptied and nothing pays from the vault, the account closed, its rent to the owner) and
 * lamports. The owner pays the fee, so an empty withdraw leaves nothing behind; the vault signs here, the owner
 * co-signs and sends it, as with the network's manager. The amounts are fixed in the transaction: a listing that
 * lands meanwhile can make it fail (nothing moved), never take more.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createTransferInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token'
import {type Keypair, type PublicKey, SystemProgram, Transaction, type TransactionInstruction} from '@solana/web3.js'

import type {Balances} from '../../market/rpc/balances.js'
import type {MarketNetwork} from '../../market/connect.js'
import {rpcCall} from '../../market/rpc/rpc.js'
import type {WithdrawAmounts} from './floor.js'

/** The withdraw transaction of `amounts` from the vault holding `balances`, signed by the vault, base64. */
export async function withdrawTransaction(
  net: MarketNetwork,
  vault: Keypair,
  owner: PublicKey,
  balances: Balances,
  amounts: WithdrawAmounts,
): Promise<string> {
  const {connection} = net
  const latest = await rpcCall(connection, () => connection.getLatestBlockhash('confirmed'))
  const instructions: TransactionInstruction[] = []
  if (amounts.tokens > 0n || amounts.closeTokenAccount) {
    const ownerTokens = getAssociatedTokenAddressSync(net.mint, owner, true)
    instructions.push(createAssociatedTokenAccountIdempotentInstruction(owner, ownerTokens, owner, net.mint))
    if (amounts.tokens > 0n) {
      instructions.push(createTransferInstruction(balances.tokenAccount, ownerTokens, vault.publicKey, amounts.tokens))
    }
    if (amounts.closeTokenAccount)
      instructions.push(createCloseAccountInstruction(balances.tokenAccount, owner, vault.publicKey))
  }
  if (amounts.lamports > 0n) {
    instructions.push(
      SystemProgram.transfer({fromPubkey: vault.publicKey, toPubkey: owner, lamports: amounts.lamports}),
    )
  }
  const tx = new Transaction({feePayer: owner, ...latest}).add(...instructions)
  tx.partialSign(vault)
  return tx.serialize({requireAllSignatures: false}).toString('base64')
}
