import type {ExposingDefinition} from './service-url.js'
import type {ContentClient} from '../ipfs/client.js'
import type {MarketNetwork} from './connect.js'
import type {JobView} from './jobs.js'
import {tooDeepAt} from '../text/nesting.js'
import {type ResultView, resultView} from '../results/result-view.js'
import {type JobOutcome, jobReport, type JobReport, jobRows, outcomeText, settledOutcome} from './report.js'

/** How a job went, read from its result: the outcome, why it failed, the normalized view and the document itself. */
export interface ResultFields extends JobOutcome {
  /** The result in one shape whatever its format (result-view.ts); null without a result or for an unknown one. */
  resultView: ResultView | null
  /** The result from the content store as stored: parsed JSON when it is JSON, else text; null until there is one. */
  resultContent: unknown
}

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

/**
 * Reads a job's result from the content store once it has one; all null before. The read is capped and checked
 * against the CID (ContentClient.get); a document nested past the limit is kept as text, as one that is no JSON is,
 * so no walk of it can overflow the stack.
 */
export async function readResult(
  content: ContentClient,
  report: Pick<JobReport, 'result'>,
  keepBytes?: (bytes: Uint8Array) => void,
): Promise<ResultFields> {
  if (!report.result) return {outcome: null, failure: null, timedOut: false, resultView: null, resultContent: null}
  const bytes = await content.get(report.result)
  keepBytes?.(bytes)
  const text = new TextDecoder().decode(bytes)
  let resultContent: unknown = text
  try {
    const parsed = JSON.parse(text) as unknown
    if (tooDeepAt(parsed) === null) resultContent = parsed
  } catch {
    // Not JSON (a result from another kind of node): shown as text.
  }
  const view = resultView(resultContent)
  return {
    outcome: view?.outcome ?? null,
    failure: view?.failure ?? null,
    timedOut: view?.timedOut ?? false,
    resultView: view,
    resultContent,
  }
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

/**
 * The result as printed under a job's report: each operation's status and its lines (`[stderr]` marks the error
 * stream), or the document as stored when it is in no known format.
 */
export function resultText(fields: Pick<ResultFields, 'resultView' | 'resultContent'>): string | null {
  const {resultView: view, resultContent} = fields
  if (view) {
    const blocks = view.ops.map((op) => {
      const how = [op.status, op.exitCode === null ? null : `exit code ${op.exitCode}`].filter(Boolean).join(', ')
      const head = `Operation ${op.id}${how ? ` (${how})` : ''}`
      const dropped = op.droppedLines > 0 ? [`[${op.droppedLines} earlier lines dropped by the node]`] : []
      const lines = op.logs.map((entry) => (entry.stream === 'stderr' ? `[stderr] ${entry.line}` : entry.line))
      return [head, ...dropped, ...lines.map((line) => `  ${line}`)].join('\n')
    })
    return blocks.length > 0 ? blocks.join('\n\n') : 'The result holds no operation.'
  }
  if (resultContent === null) return null
  return typeof resultContent === 'string' ? resultContent : JSON.stringify(resultContent, null, 2)
}
