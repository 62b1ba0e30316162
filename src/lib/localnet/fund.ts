/** `localnet fund`: the faucet's transfer sent through the localnet's JSON-RPC, as any client sends one. */
import {getAccount, getAssociatedTokenAddressSync} from '@solana/spl-token'
import {Connection, PublicKey, SendTransactionError, sendAndConfirmTransaction, Transaction} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'
import {readKeypair} from '../keys/wallet.js'
import {faucetInstructions, type FundAmounts} from './faucet.js'
import {localnetFiles} from './paths.js'

export interface FundResult {
  signature: string
  /** Balances after the transfer, in lamports and token base units. */
  lamports: bigint
  tokens: bigint
}

/** Sends SOL and tokens from the localnet's faucet to `owner` and returns the new balances. */
export async function fundFromFaucet(
  dataDir: string,
  // Where the running localnet answers (its runtime record's URLs): all a transfer needs of it.
  runtime: {rpcUrl: string; wsUrl: string},
  mint: PublicKey,
  owner: PublicKey,
  amounts: FundAmounts,
): Promise<FundResult> {
  const faucet = readKeypair(localnetFiles(dataDir).faucet)
  const connection = new Connection(runtime.rpcUrl, {commitment: 'confirmed', wsEndpoint: runtime.wsUrl})
  const tx = new Transaction().add(...faucetInstructions(faucet.publicKey, mint, owner, amounts))
  let signature: string
  try {
    signature = await sendAndConfirmTransaction(connection, tx, [faucet])
  } catch (error) {
    // A refused transaction's reason (e.g. "custom program error: 0x1") is in its simulation message.
    const reason = error instanceof SendTransactionError ? error.transactionError.message : (error as Error).message
    throw new GpunetError('fund_failed', `the faucet transfer failed: ${reason}`, {
      exitCode: ExitCode.UNAVAILABLE,
      hint: 'Check the localnet with "gpunet localnet status".',
      cause: error,
    })
  }
  const lamports = BigInt(await connection.getBalance(owner))
  const tokens = await getAccount(connection, getAssociatedTokenAddressSync(mint, owner, true)).then(
    (a) => a.amount,
    () => 0n,
  )
  return {signature, lamports, tokens}
}
