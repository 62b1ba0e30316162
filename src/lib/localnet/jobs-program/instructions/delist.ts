/**
 * `delist`: the project takes a queued job out of the job queue and closes it into its payer. It enforces the job's
 * payer, market and project, a Queued job in a job queue, and the refund to the payer's ATA (nothing moves for a
 * free job).
 */
import {JobState, QueueType} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {JobsError} from '../errors.js'
import {
  deposit,
  hasVault,
  type InstructionDef,
  jobAta,
  mut,
  closedByProject,
  removeFromQueue,
  tokenProgram,
} from '../instruction-kit.js'

/** The `delist` instruction. */
export const delist: InstructionDef<'delist'> = {
  accounts: [
    mut('job', 'job', {close: 'payer', checks: closedByProject(JobState.QUEUED)}),
    mut('market', 'market', {
      checks: (a) => {
        hasVault(a)
        require(a.market().queueType === QueueType.JOB, JobsError.MarketInWrongState, 'market')
      },
    }),
    mut('deposit', 'token', {checks: jobAta('deposit', (a) => a.key('payer'))}),
    mut('payer', 'unchecked'),
    mut('vault', 'token'),
    tokenProgram,
    mut('authority', 'signer'),
  ],
  handler(a) {
    removeFromQueue(a.market(), a.key('job'))
    const job = a.job()
    if (job.price === 0n) return
    const vault = a.key('vault')
    a.ctx.transferTokens(vault, a.key('deposit'), vault, deposit(job.price, job.timeout))
  },
}
