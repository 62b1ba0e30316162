/**
 * `recover`: the project of a Stopped job (its node quit) closes it and gets its deposit back into `user`. It
 * enforces the job's payer, market and project, the Stopped state and the market's vault.
 */
import {JobState} from '../../../market/codec/accounts.js'
import {deposit, hasVault, type InstructionDef, mut, closedByProject, ro, tokenProgram} from '../instruction-kit.js'

/** The `recover` instruction. */
export const recover: InstructionDef<'recover'> = {
  accounts: [
    mut('job', 'job', {close: 'payer', checks: closedByProject(JobState.STOPPED)}),
    ro('market', 'market', {checks: hasVault}),
    mut('vault', 'token'),
    mut('user', 'token'),
    mut('payer', 'unchecked'),
    ro('authority', 'signer'),
    tokenProgram,
  ],
  handler(a) {
    // Made even at price 0, so a negative timeout panics here too.
    const job = a.job()
    const vault = a.key('vault')
    a.ctx.transferTokens(vault, a.key('user'), vault, deposit(job.price, job.timeout))
  },
}
