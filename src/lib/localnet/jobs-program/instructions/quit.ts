/**
 * `quit`: the node of a run gives the job up: the run is closed into its payer and the job is Stopped, for
 * another node to `claim` or its project to `recover`. It enforces the node's own run of that job.
 */
import {JobState} from '../../../market/codec/accounts.js'
import {type InstructionDef, mut, nodeRun, ro} from '../instruction-kit.js'

/** The `quit` instruction. */
export const quit: InstructionDef<'quit'> = {
  accounts: [
    mut('job', 'job'),
    mut('run', 'run', {close: 'payer', checks: nodeRun('payer')}),
    mut('payer', 'unchecked'),
    ro('authority', 'signer'),
  ],
  handler(a) {
    // Whatever the state was, a Done job included; the job is not queued again.
    a.job().state = JobState.STOPPED
  },
}
