import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, type PublicKey, SystemProgram, type TransactionInstruction} from '@solana/web3.js'

import {findVaultAddress, ipfsHashToBytes, jobsInstruction} from '../../src/lib/market/index.js'

/** A CIDv0 of a job definition ("hello world\n"). */
export const JOB_CID = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'

/** A throwaway address for accounts the localnet accepts but does not use (rewards, stake, NFT). */
export const anyKey = (): PublicKey => Keypair.generate().publicKey

/** A `list` of a job on `market`, paid from the payer's associated token account. */
export function listInstruction(options: {
  programId: PublicKey
  market: PublicKey
  mint: PublicKey
  payer: PublicKey
  job: PublicKey
  run: PublicKey
  timeout: bigint
  /** The job's project; the payer by default. */
  authority?: PublicKey
  /** The definition's CIDv0; JOB_CID by default. */
  cid?: string
}): TransactionInstruction {
  const {programId, market, mint, payer, job, run, timeout} = options
  return jobsInstruction(
    programId,
    'list',
    {
      job,
      market,
      run,
      user: getAssociatedTokenAddressSync(mint, payer, true),
      vault: findVaultAddress(programId, market, mint)[0],
      payer,
      rewardsReflection: anyKey(),
      rewardsVault: anyKey(),
      authority: options.authority ?? payer,
      rewardsProgram: anyKey(),
      tokenProgram: TOKEN_PROGRAM_ID,
      systemProgram: SystemProgram.programId,
    },
    {ipfsJob: ipfsHashToBytes(options.cid ?? JOB_CID), timeout},
  )
}
