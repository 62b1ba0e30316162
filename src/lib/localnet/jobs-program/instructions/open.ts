/**
 * `open`: creates a market and its token vault at the PDA [market, mint], paid by the signing authority. It
 * enforces the program's own mint (`InvalidMint`) and the vault's address (`ConstraintSeeds`, while creating it); a
 * job type past 4 is stored as Unknown, which turns queueing off.
 */
import {findVaultAddress} from '../../../market/codec/pda.js'
import {type MarketAccount, QueueType} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {NosanaError} from '../errors.js'
import {type InstructionDef, JOB_TYPE_UNKNOWN, mut, ro, systemProgram, tokenProgram} from '../instruction-kit.js'

/** The `open` instruction. */
export const open: InstructionDef<'open'> = {
  accounts: [
    ro('mint', 'mint', {
      checks: (a) => require(a.key('mint').equals(a.ctx.ids.tokenMint), NosanaError.InvalidMint, 'mint'),
    }),
    ro('market', 'market', {mut: true, init: {payer: 'authority'}}),
    ro('vault', 'token', {mut: true, initVault: {payer: 'authority', market: 'market', mint: 'mint'}}),
    mut('authority', 'signer'),
    ro('accessKey', 'unchecked'),
    ro('rent', 'rent'),
    systemProgram,
    tokenProgram,
  ],
  handler(a, args) {
    const [vault, bump] = findVaultAddress(a.ctx.programId, a.key('market'), a.key('mint'))
    Object.assign(a.market(), {
      authority: a.key('authority'),
      jobExpiration: args.jobExpiration,
      jobPrice: args.jobPrice,
      jobTimeout: args.jobTimeout,
      jobType: args.jobType <= 4 ? args.jobType : JOB_TYPE_UNKNOWN,
      vault,
      vaultBump: bump,
      nodeAccessKey: a.key('accessKey'),
      nodeXnosMinimum: args.nodeXnosMinimum,
      queueType: QueueType.EMPTY,
      queue: [],
    } satisfies MarketAccount)
  },
}
