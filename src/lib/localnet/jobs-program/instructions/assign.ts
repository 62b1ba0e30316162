/**
 * `assign`: a project gives a new job straight to a node waiting in the market's queue, creating the job and its
 * run. It enforces the market's vault, a node queue (`MarketInWrongState`), the payer's ATA when the market charges
 * (`InvalidATA`) and the node's place in the queue (`NotInMarketQueue`); the deposit is taken as `list` takes it.
 */
import {QueueType} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {JobsError} from '../errors.js'
import {
  fillRun,
  hasVault,
  type InstructionDef,
  mut,
  newJob,
  payerAta,
  removeFromQueue,
  rewardsProgram,
  ro,
  systemProgram,
  takeDeposit,
  tokenProgram,
} from '../instruction-kit.js'

/** The `assign` instruction. */
export const assign: InstructionDef<'assign'> = {
  accounts: [
    mut('job', 'job', {init: {payer: 'payer'}}),
    mut('market', 'market', {
      checks: (a) => {
        hasVault(a)
        require(a.market().queueType === QueueType.NODE, JobsError.MarketInWrongState, 'market')
      },
    }),
    mut('run', 'run', {init: {payer: 'payer'}}),
    ro('node', 'unchecked'),
    mut('user', 'token', {checks: payerAta}),
    mut('vault', 'token'),
    mut('payer', 'signer'),
    mut('rewardsReflection', 'reflection'),
    mut('rewardsVault', 'token'),
    ro('authority', 'signer'),
    rewardsProgram,
    tokenProgram,
    systemProgram,
  ],
  handler(a, args) {
    removeFromQueue(a.market(), a.key('node'))
    newJob(a, args.ipfsJob, args.timeout)
    fillRun(a, a.key('job'), a.key('node'))
    takeDeposit(a)
  },
}
