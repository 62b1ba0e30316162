/**
 * `update`: the market's authority, and only it (`Unauthorized`), changes the market's settings. Unlike `open`,
 * the job type is stored as given; the queue is left as it is.
 */
import type {MarketAccount} from '../../../market/codec/accounts.js'
import {type InstructionDef, marketAuthority, mut, ro} from '../instruction-kit.js'

/** The `update` instruction. */
export const update: InstructionDef<'update'> = {
  accounts: [
    mut('market', 'market', {checks: marketAuthority}),
    ro('accessKey', 'unchecked'),
    ro('authority', 'signer'),
  ],
  handler(a, args) {
    Object.assign(a.market(), {
      jobExpiration: args.jobExpiration,
      jobPrice: args.jobPrice,
      jobType: args.jobType,
      nodeAccessKey: a.key('accessKey'),
      nodeXnosMinimum: args.nodeStakeMinimum,
      jobTimeout: args.jobTimeout,
    } satisfies Partial<MarketAccount>)
  },
}
