/** How a job that ended went, as its result says it (the chain says only COMPLETED or STOPPED), and that in words. */
import type {JobFailure} from './flow-state.js'

/** How a job that ended went: the chain says COMPLETED whether its operations passed or not (docs/json.md). */
export type Outcome = 'succeeded' | 'failed' | 'stopped'

/** How a done job went, from its result document: the chain says COMPLETED whether its operations passed or not. */
export interface JobOutcome {
  /** `succeeded`, `failed` or `stopped` (docs/json.md, "States and outcomes"); null while it runs or when unknown. */
  outcome: Outcome | null
  /** Why it failed (the operation and its exit code when one failed); null unless it failed. */
  failure: JobFailure | null
  /** Its node stopped it at its timeout (result-view.ts): a `succeeded` job then ran until its timeout. */
  timedOut: boolean
}

/**
 * The outcome as one line: "failed (operation boom, exit code 3): Operation boom could not run: ... [code]", giving
 * the operation and exit code only where the failure's message does not already say them ("failed: Operation boom
 * exited with code 3. [operation_failed]"), so nothing is said twice.
 */
export function outcomeText({outcome, failure, timedOut}: JobOutcome): string | null {
  // The network counts a job its node stopped at its timeout as done: succeeded, which alone would not say why it ended.
  if (outcome === 'succeeded' && timedOut) return 'succeeded (it ran until its timeout)'
  if (outcome !== 'failed' || !failure) return outcome
  const said = failure.message.toLowerCase()
  const op =
    failure.op === undefined || said.includes(`operation ${failure.op}`.toLowerCase()) ? '' : `operation ${failure.op}`
  const code =
    failure.exitCode === undefined || new RegExp(`\\bcode ${failure.exitCode}\\b`).test(said)
      ? ''
      : `exit code ${failure.exitCode}`
  const detail = [op, code].filter(Boolean).join(', ')
  return `failed${detail ? ` (${detail})` : ''}: ${failure.message} [${failure.code}]`
}
