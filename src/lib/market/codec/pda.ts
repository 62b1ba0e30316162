import {PublicKey} from '@solana/web3.js'

/** The market's token vault: a PDA of the jobs program with seeds [market, mint]. */
export function findVaultAddress(programId: PublicKey, market: PublicKey, mint: PublicKey): [PublicKey, number] {
  return PublicKey.findProgramAddressSync([market.toBuffer(), mint.toBuffer()], programId)
}

/** The staking program, whose stake accounts the jobs program reads in `work` and `claim`. */
export const STAKING_PROGRAM_ID = new PublicKey('nosScmHY2uR24Zh751PmGj9ww9QRNHewh9H59AfrTJE')

/** A node's stake account: PDA ["stake", payment mint, node] of the staking program. */
export function findStakeAddress(mint: PublicKey, node: PublicKey): PublicKey {
  return PublicKey.findProgramAddressSync(
    [Buffer.from('stake'), mint.toBuffer(), node.toBuffer()],
    STAKING_PROGRAM_ID,
  )[0]
}
