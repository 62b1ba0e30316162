/** The faucet's transfer: SOL from the faucet and freshly minted payment tokens into the owner's token account. */
import {randomUUID} from 'node:crypto'

import {createAssociatedTokenAccountIdempotentInstruction, createMintToInstruction, getAssociatedTokenAddressSync} from '@solana/spl-token'
import {PublicKey, SystemProgram, TransactionInstruction} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'

const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')

export interface FundAmounts {
  lamports?: bigint
  /** Token base units. */
  tokens?: bigint
}

/** Instructions that send `amounts` to `owner`, paid and signed by the faucet (also the mint authority). */
export function faucetInstructions(faucet: PublicKey, mint: PublicKey, owner: PublicKey, amounts: FundAmounts): TransactionInstruction[] {
  // A unique memo: two equal requests within one slot would otherwise be the same transaction, refused as a duplicate.
  const instructions = [new TransactionInstruction({programId: MEMO_PROGRAM_ID, keys: [], data: Buffer.from(`gpunet faucet ${randomUUID()}`)})]
  if (amounts.lamports) instructions.push(SystemProgram.transfer({fromPubkey: faucet, toPubkey: owner, lamports: amounts.lamports}))
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

/** Parses a decimal amount ("1.5") into base units with `decimals` places, without floating point. */
export function parseAmount(text: string, decimals: number, what: string): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim())
  if (!match || (match[2]?.length ?? 0) > decimals) {
    throw new GpunetError('invalid_amount', `invalid ${what} amount "${text}"`, {
      exitCode: ExitCode.USAGE,
      hint: `Give a non-negative number with at most ${decimals} decimals, e.g. 1.5.`,
    })
  }
  return BigInt(match[1]!) * 10n ** BigInt(decimals) + BigInt((match[2] ?? '').padEnd(decimals, '0') || '0')
}

/** Formats base units as a decimal amount ("1.5"). */
export function formatAmount(units: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals)
  const fraction = (units % scale).toString().padStart(decimals, '0').replace(/0+$/, '')
  return fraction ? `${units / scale}.${fraction}` : `${units / scale}`
}
