/** A job as the client shows it: its report from the chain with its result, and the rows of `job get`. */
import type {ExposingDefinition} from '../service-url.js'
import type {MarketNetwork} from '../connect.js'
import type {JobView} from './jobs.js'
import {readResult, type ResultFields} from '../../results/job-result.js'
import {type JobOutcome, outcomeText} from '../../results/outcome.js'
import {jobReport, type JobReport, jobRows, settledOutcome} from './report.js'

/** A job as `gpunet job get --json` shows it: status, node, times, cost, service URLs and, once done, its result. */
export type JobInfo = JobReport & ResultFields

/**
 * A job's report with its result; the caller passes the definition it fetched (to wait or note), so it is read once.
 * `keepBytes` receives the result's bytes as stored (for `--out`, which writes them exactly).
 */
export async function jobInfo(
  net: MarketNetwork,
  view: JobView,
  definition: ExposingDefinition | null,
  keepBytes?: (bytes: Uint8Array) => void,
): Promise<JobInfo> {
  const report = jobReport(net.name, view, definition, net, Date.now() / 1000)
  const fields = await readResult(net.content(), report, keepBytes)
  return {...report, ...fields, outcome: settledOutcome(report.state, report.result, fields.outcome)}
}

/** The report's rows with the outcome right under State, which stays the chain's (a failed job is COMPLETED there). */
export function rowsWithOutcome(
  report: JobReport & JobOutcome & Partial<Pick<ResultFields, 'resultContent'>>,
): [string, string | null][] {
  const rows = jobRows(report)
  // A job its poster ended has no result until its node records one (`complete`), which may take a while.
  const outcome =
    report.outcome === 'stopped' && report.result === null
      ? 'stopped before it finished (no result recorded)'
      : outcomeText(report)
  rows.splice(
    rows.findIndex(([label]) => label === 'State') + 1,
    0,
    ['Outcome', outcome],
    [
      'Isolation',
      ranOnHost(report.resultContent)
        ? 'NONE: the node ran it as host processes, not in containers (images unused)'
        : null,
    ],
  )
  return rows
}

/** Whether a result says its operations ran without a container (gpunet's flow state: `gpunet.isolated` false). */
function ranOnHost(content: unknown): boolean {
  const own = (content as {gpunet?: {isolated?: unknown}} | null)?.gpunet
  return typeof own === 'object' && own !== null && own.isolated === false
}
