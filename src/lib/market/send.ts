/** Sending a jobs program transaction and waiting for its confirmation, with failures as GpunetErrors. */
import {
  type Connection,
  type Keypair,
  sendAndConfirmTransaction,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'

/** The SPL token program's "insufficient funds" error. */
const TOKEN_INSUFFICIENT_FUNDS = /custom program error: 0x1$/m

/** Signs (the first signer pays the fee), sends and confirms; returns the signature. */
export async function sendJobsTransaction(
  connection: Connection,
  instructions: TransactionInstruction[],
  signers: Keypair[],
): Promise<string> {
  const tx = new Transaction().add(...instructions)
  try {
    return await sendAndConfirmTransaction(connection, tx, signers, {commitment: 'confirmed'})
  } catch (error) {
    const message = (error as Error).message
    const logs = (error as {logs?: string[]}).logs ?? []
    const poor = TOKEN_INSUFFICIENT_FUNDS.test(message) || /insufficient (funds|lamports)/i.test(logs.join('\n'))
    throw new GpunetError(
      poor ? 'insufficient_balance' : 'transaction_failed',
      `the transaction failed: ${firstLine(message)}`,
      {
        exitCode: poor ? ExitCode.INSUFFICIENT_BALANCE : ExitCode.UNAVAILABLE,
        cause: error,
        hint: logs.length > 0 ? `program logs: ${logs.slice(-3).join(' / ')}` : undefined,
      },
    )
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim()
}
