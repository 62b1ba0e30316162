/** The rewards accounts `list` and `extend` take, at the addresses the rewards program derives them. */
import {PublicKey} from '@solana/web3.js'

import type {RewardsAccounts} from '../market/connect.js'
import {REWARDS_PROGRAM_ID} from './jobs-program/context.js'

/** Reflection PDA ["reflection"] and vault PDA [mint] of the rewards program, for the localnet's mint. */
export function localnetRewardsAccounts(mint: PublicKey): RewardsAccounts {
  const pda = (seed: Buffer) => PublicKey.findProgramAddressSync([seed], REWARDS_PROGRAM_ID)[0]
  return {
    rewardsReflection: pda(Buffer.from('reflection')),
    rewardsVault: pda(mint.toBuffer()),
    rewardsProgram: REWARDS_PROGRAM_ID,
  }
}
