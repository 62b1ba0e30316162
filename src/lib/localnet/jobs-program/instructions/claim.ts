/**
 * `claim`: a node takes over a Stopped job with a new run. It enforces the job's market and state, and the node's
 * stake and access NFT as `work` does.
 */
import {JobState} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {JobsError} from '../errors.js'
import {
  fillRun,
  type InstructionDef,
  jobInMarket,
  mut,
  nodeGateAccounts,
  ro,
  systemProgram,
} from '../instruction-kit.js'

/** The `claim` instruction. */
export const claim: InstructionDef<'claim'> = {
  accounts: [
    mut('job', 'job', {
      checks: (a) => {
        jobInMarket(a)
        require(a.job().state === JobState.STOPPED, JobsError.JobInWrongState, 'job')
      },
    }),
    mut('run', 'run', {init: {payer: 'payer'}}),
    ro('market', 'market'),
    ...nodeGateAccounts,
    mut('payer', 'signer'),
    ro('authority', 'signer'),
    systemProgram,
  ],
  handler(a) {
    // The job stays Stopped: it may be claimed again, or recovered by its project.
    fillRun(a, a.key('job'), a.key('authority'))
  },
}
