/**
 * `quit_admin`: the build's `MARKET_ADMIN` (`Unauthorized` for anyone else) closes any run into its payer
 * (`InvalidPayer`); the job is left as it is.
 */
import {require} from '../accounts.js'
import {NosanaError} from '../errors.js'
import {adminOnly, type InstructionDef, mut, ro} from '../instruction-kit.js'

/** The `quit_admin` instruction. */
export const quitAdmin: InstructionDef<'quitAdmin'> = {
  accounts: [
    mut('run', 'run', {
      close: 'payer',
      checks: (a) => require(a.run().payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'run'),
    }),
    mut('payer', 'unchecked'),
    ro('authority', 'signer', {checks: adminOnly}),
  ],
  handler() {},
}
