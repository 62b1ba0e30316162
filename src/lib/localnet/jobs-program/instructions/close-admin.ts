/**
 * `close_admin`: `close` signed by the build's `MARKET_ADMIN` (`Unauthorized` for anyone else) instead of the
 * market's authority, with the same vault check.
 */
import {adminOnly, closeMarket, hasVault, type InstructionDef, mut, ro, tokenProgram} from '../instruction-kit.js'

/** The `close_admin` instruction. */
export const closeAdmin: InstructionDef<'closeAdmin'> = {
  accounts: [
    mut('market', 'market', {close: 'authority', checks: hasVault}),
    mut('vault', 'token'),
    mut('user', 'token'),
    ro('authority', 'signer', {checks: adminOnly}),
    tokenProgram,
  ],
  handler: closeMarket,
}
