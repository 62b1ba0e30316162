/**
 * `extend`: the project lengthens a queued job's timeout and pays the extra deposit from the payer's ATA. It
 * enforces the project's job in that market, the payer of a paid job (`Unauthorized`), the Queued state and a
 * longer timeout (`JobTimeoutNotGreater`).
 */
import {JobState} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {fail, JobsError, NosanaError} from '../errors.js'
import {
  hasVault,
  i64,
  type InstructionDef,
  jobAta,
  mut,
  projectsJob,
  rewardsProgram,
  ro,
  tokenProgram,
  u64,
} from '../instruction-kit.js'

/** The `extend` instruction. */
export const extend: InstructionDef<'extend'> = {
  accounts: [
    mut('job', 'job', {
      checks: (a) => {
        projectsJob(a)
        const job = a.job()
        require(job.price === 0n || job.payer.equals(a.key('payer')), NosanaError.Unauthorized, 'job')
        require(job.state === JobState.QUEUED, JobsError.JobInWrongState, 'job')
      },
    }),
    ro('market', 'market', {checks: hasVault}),
    mut('user', 'token', {checks: jobAta('user', (a) => a.key('payer'))}),
    mut('vault', 'token'),
    mut('rewardsReflection', 'reflection'),
    mut('rewardsVault', 'token'),
    ro('authority', 'signer'),
    ro('payer', 'signer'),
    rewardsProgram,
    tokenProgram,
  ],
  handler(a, args) {
    const job = a.job()
    if (args.timeout <= job.timeout) fail(JobsError.JobTimeoutNotGreater)
    const delta = i64(args.timeout - job.timeout, 'timeout delta')
    job.timeout = args.timeout
    if (job.price === 0n) return
    a.ctx.transferTokens(a.key('user'), a.key('vault'), a.key('payer'), u64(job.price * delta, 'extra deposit'))
  },
}
