/**
 * `close`: the market's authority (`Unauthorized`) closes a market that names its vault (`InvalidVault`); the
 * vault is emptied into `user`, then closed.
 */
import {closeMarket, hasVault, type InstructionDef, marketAuthority, mut, ro, tokenProgram} from '../instruction-kit.js'

/** The `close` instruction. */
export const close: InstructionDef<'close'> = {
  accounts: [
    mut('market', 'market', {
      close: 'authority',
      checks: (a) => {
        marketAuthority(a)
        hasVault(a)
      },
    }),
    mut('vault', 'token'),
    mut('user', 'token'),
    ro('authority', 'signer'),
    tokenProgram,
  ],
  handler: closeMarket,
}
