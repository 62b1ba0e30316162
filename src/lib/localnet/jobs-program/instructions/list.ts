/**
 * `list`: a project posts a job. With a node queued it goes to the first node at once (a run is created at the
 * fresh `run` key); otherwise it joins the job queue. It enforces the market's vault, a fresh signing `run` key
 * (`MissingSignature`, `LamportsNonNull`) and the payer's ATA when the market charges (`InvalidATA`).
 */
import {QueueType} from '../../../market/codec/accounts.js'
import {
  addToQueue,
  createRun,
  freshRun,
  hasVault,
  type InstructionDef,
  mut,
  newJob,
  payerAta,
  popFirst,
  rewardsProgram,
  ro,
  systemProgram,
  takeDeposit,
  tokenProgram,
} from '../instruction-kit.js'

/** The `list` instruction. */
export const list: InstructionDef<'list'> = {
  accounts: [
    mut('job', 'job', {init: {payer: 'payer'}}),
    mut('market', 'market', {checks: hasVault}),
    mut('run', 'unchecked', {checks: freshRun}),
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
    newJob(a, args.ipfsJob, args.timeout)
    const market = a.market()
    if (market.queueType === QueueType.NODE) createRun(a, a.key('job'), popFirst(market))
    else addToQueue(market, a.key('job'), QueueType.JOB)
    takeDeposit(a)
  },
}
