/**
 * `complete`: the node of a Done job sets the result it lacks. It enforces the state, the node
 * (`Unauthorized`), no result yet (`JobResultsAlreadySet`) and a result that is not all zeros (`JobResultNull`).
 */
import {JobState} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {fail, JobsError, NosanaError} from '../errors.js'
import {type InstructionDef, isZero, mut, ro} from '../instruction-kit.js'

/** The `complete` instruction. */
export const complete: InstructionDef<'complete'> = {
  accounts: [
    mut('job', 'job', {
      checks: (a) => {
        const job = a.job()
        require(job.state === JobState.DONE, JobsError.JobInWrongState, 'job')
        require(job.node.equals(a.key('authority')), NosanaError.Unauthorized, 'job')
        require(isZero(job.ipfsResult), JobsError.JobResultsAlreadySet, 'job')
      },
    }),
    ro('authority', 'signer'),
  ],
  handler(a, args) {
    if (isZero(args.ipfsResult)) fail(JobsError.JobResultNull)
    a.job().ipfsResult = args.ipfsResult
  },
}
