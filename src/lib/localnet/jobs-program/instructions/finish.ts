/**
 * `finish`: the node of a run posts the job's result: the job is Done, the run is closed into its payer, and the
 * node is paid for its time (capped at the timeout) with the rest refunded to the job's payer. It enforces the
 * job's market and payer, the node's own run, the market's vault, the job payer's ATA, a `user` account of the
 * program's mint and a result that is not all zeros (`JobResultNull`).
 */
import {JobState} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {fail, JobsError, NosanaError} from '../errors.js'
import {
  hasVault,
  type InstructionDef,
  isZero,
  jobAta,
  jobInMarket,
  mut,
  nodeRun,
  ro,
  settle,
  tokenProgram,
} from '../instruction-kit.js'

/** The `finish` instruction. */
export const finish: InstructionDef<'finish'> = {
  accounts: [
    mut('job', 'job', {
      checks: (a) => {
        jobInMarket(a)
        require(a.job().payer.equals(a.key('payerJob')), NosanaError.InvalidPayer, 'job')
      },
    }),
    mut('run', 'run', {close: 'payerRun', checks: nodeRun('payerRun')}),
    ro('market', 'market', {checks: hasVault}),
    mut('vault', 'token'),
    mut('deposit', 'token', {dup: true, checks: jobAta('deposit', (a) => a.key('payerJob'))}),
    mut('user', 'token', {
      checks: (a) =>
        require(a.job().price === 0n ||
          a.token('user').mint.equals(a.ctx.ids.tokenMint), NosanaError.InvalidATA, 'user'),
    }),
    mut('payerRun', 'unchecked'),
    mut('payerJob', 'unchecked'),
    ro('authority', 'signer'),
    tokenProgram,
  ],
  handler(a, args) {
    if (isZero(args.ipfsResult)) fail(JobsError.JobResultNull)
    Object.assign(a.job(), {
      ipfsResult: args.ipfsResult,
      node: a.key('authority'),
      state: JobState.DONE,
      timeEnd: a.ctx.now,
      timeStart: a.run().time,
    })
    settle(a)
  },
}
