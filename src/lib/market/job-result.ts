import type {JobDefinition} from '../definition/schema.js'
import type {ContentClient} from '../ipfs/client.js'
import type {MarketNetwork} from './connect.js'
import type {JobView} from './jobs.js'
import {jobOutcome, type JobOutcome, jobReport, type JobReport, jobRows, outcomeText} from './report.js'

/** How a job went, read from its result: the outcome, why it failed, and the result document itself. */
export interface ResultFields extends JobOutcome {
  /** The result from the content store: parsed JSON when it is JSON, else text; null until the job is done. */
  resultContent: unknown
}

/** A job as `gpunet job get --json` shows it: status, node, times, cost, service URLs and, once done, its result. */
export type JobInfo = JobReport & ResultFields

/** A job's report with its result; the caller passes the definition it fetched (to wait or note), so it is read once. */
export async function jobInfo(net: MarketNetwork, view: JobView, definition: JobDefinition | null): Promise<JobInfo> {
  const report = jobReport(net.name, view, definition, net, Date.now() / 1000)
  return {...report, ...(await readResult(net.content(), report))}
}

/** Reads a job's result from the content store once it has one; all null before. */
export async function readResult(content: ContentClient, report: Pick<JobReport, 'result'>): Promise<ResultFields> {
  if (!report.result) return {outcome: null, failure: null, resultContent: null}
  const text = new TextDecoder().decode(await content.get(report.result))
  let resultContent: unknown = text
  try {
    resultContent = JSON.parse(text) as unknown
  } catch {
    // Not JSON (a result from another kind of node): shown as text.
  }
  return {...jobOutcome(resultContent), resultContent}
}

/** The report's rows with the outcome right under Status, which stays the chain's (a failed job is COMPLETED there). */
export function rowsWithOutcome(report: JobReport & JobOutcome): [string, string | null][] {
  const rows = jobRows(report)
  rows.splice(rows.findIndex(([label]) => label === 'Status') + 1, 0, ['Outcome', outcomeText(report)])
  return rows
}

/** The result document as printed under a job's report. */
export function resultText(resultContent: unknown): string | null {
  if (resultContent === null) return null
  return typeof resultContent === 'string' ? resultContent : JSON.stringify(resultContent, null, 2)
}
