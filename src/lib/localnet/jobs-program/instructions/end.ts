/**
 * `end`: the project ends a running job: it is Done with the run's node and times, the run is closed into its
 * payer, and the node is paid for its time with the rest refunded, as `finish` settles. It enforces the project's
 * job in that market, the run of that job, and the ATAs of the job's payer and the run's node.
 */
import {JobState} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {JobsError, NosanaError} from '../errors.js'
import {hasVault, type InstructionDef, jobAta, mut, projectsJob, ro, settle, tokenProgram} from '../instruction-kit.js'

/** The `end` instruction. */
export const end: InstructionDef<'end'> = {
  accounts: [
    mut('job', 'job', {checks: projectsJob}),
    ro('market', 'market', {checks: hasVault}),
    mut('run', 'run', {
      close: 'payer',
      checks: (a) => {
        const run = a.run()
        require(run.payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'run')
        require(run.job.equals(a.key('job')), JobsError.InvalidJobAccount, 'run')
      },
    }),
    mut('deposit', 'token', {dup: true, checks: jobAta('deposit', (a) => a.job().payer)}),
    mut('user', 'token', {checks: jobAta('user', (a) => a.run().node)}),
    mut('vault', 'token'),
    mut('payer', 'unchecked'),
    mut('authority', 'signer'),
    tokenProgram,
  ],
  handler(a) {
    const job = a.job()
    const run = a.run()
    Object.assign(job, {state: JobState.DONE, timeStart: run.time, timeEnd: a.ctx.now, node: run.node})
    settle(a)
  },
}
