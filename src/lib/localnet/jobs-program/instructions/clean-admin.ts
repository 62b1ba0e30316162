/**
 * `clean_admin`: the build's `MARKET_ADMIN` (`Unauthorized` for anyone else) closes any job into its payer
 * (`InvalidPayer`), whatever its state or age.
 */
import {require} from '../accounts.js'
import {NosanaError} from '../errors.js'
import {adminOnly, type InstructionDef, mut, ro} from '../instruction-kit.js'

/** The `clean_admin` instruction. */
export const cleanAdmin: InstructionDef<'cleanAdmin'> = {
  accounts: [
    mut('job', 'job', {
      close: 'payer',
      checks: (a) => require(a.job().payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'job'),
    }),
    mut('payer', 'unchecked'),
    ro('authority', 'signer', {checks: adminOnly}),
  ],
  handler() {},
}
