/**
 * `clean`: anyone closes a Done job into its payer once more than the market's `job_expiration` seconds have
 * passed since it ended. It enforces the payer (`InvalidPayer`), the state and the expiry (`JobNotExpired`).
 */
import {JobState} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {JobsError, NosanaError} from '../errors.js'
import {type InstructionDef, mut, ro} from '../instruction-kit.js'

/** The `clean` instruction. */
export const clean: InstructionDef<'clean'> = {
  accounts: [
    mut('job', 'job', {
      close: 'payer',
      checks: (a) => {
        const job = a.job()
        require(job.payer.equals(a.key('payer')), NosanaError.InvalidPayer, 'job')
        require(job.state === JobState.DONE, JobsError.JobInWrongState, 'job')
        // Any market will do: the program does not tie it to the job.
        require(a.market().jobExpiration < a.ctx.now - job.timeEnd, JobsError.JobNotExpired, 'job')
      },
    }),
    ro('market', 'market'),
    mut('payer', 'unchecked'),
  ],
  handler() {},
}
