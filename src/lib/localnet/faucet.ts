/** The faucet's transfer: SOL from the faucet and freshly minted payment tokens into the owner's token account. */
import {randomUUID} from 'node:crypto'

import {
  createAssociatedTokenAccountIdempotentInstruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token'
import {PublicKey, SystemProgram, TransactionInstruction} from '@solana/web3.js'

const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')

export interface FundAmounts {
  lamports?: bigint
  /** Token base units. */
  tokens?: bigint
}

/** Instructions that send `amounts` to `owner`, paid and signed by the faucet (also the mint authority). */
export function faucetInstructions(
  faucet: PublicKey,
  mint: PublicKey,
  owner: PublicKey,
  amounts: FundAmounts,
): TransactionInstruction[] {
  // A unique memo: two equal requests within one slot would otherwise be the same transaction, refused as a duplicate.
  const instructions = [
    new TransactionInstruction({
      programId: MEMO_PROGRAM_ID,
      keys: [],
      data: Buffer.from(`gpunet faucet ${randomUUID()}`),
    }),
  ]
  if (amounts.lamports)
    instructions.push(SystemProgram.transfer({fromPubkey: faucet, toPubkey: owner, lamports: amounts.lamports}))
  if (amounts.tokens) {
    // Off-curve owners (program addresses) may hold tokens too.
    const account = getAssociatedTokenAddressSync(mint, owner, true)
    instructions.push(
      createAssociatedTokenAccountIdempotentInstruction(faucet, account, owner, mint),
      createMintToInstruction(mint, account, faucet, amounts.tokens),
    )
  }
  return instructions
}
