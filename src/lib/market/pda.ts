import {PublicKey} from '@solana/web3.js'

/** The market's token vault: a PDA of the jobs program with seeds [market, mint]. */
export function findVaultAddress(programId: PublicKey, market: PublicKey, mint: PublicKey): [PublicKey, number] {
  return PublicKey.findProgramAddressSync([market.toBuffer(), mint.toBuffer()], programId)
}
