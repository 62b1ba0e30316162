/**
 * A job's result as the client reads it: fetched from the content store (checked against its CID), read in any
 * known format (result-view.ts) and put in words under the job's report.
 */
import type {ContentClient} from '../ipfs/client.js'
import {tooDeepAt} from '../text/nesting.js'
import type {JobOutcome} from './outcome.js'
import {type ResultView, resultView} from './result-view.js'

/** How a job went, read from its result: the outcome, why it failed, the normalized view and the document itself. */
export interface ResultFields extends JobOutcome {
  /** The result in one shape whatever its format (result-view.ts); null without a result or for an unknown one. */
  resultView: ResultView | null
  /** The result from the content store as stored: parsed JSON when it is JSON, else text; null until there is one. */
  resultContent: unknown
}

/**
 * Reads a job's result from the content store once it has one; all null before. The read is capped and checked
 * against the CID (ContentClient.get); a document nested past the limit is kept as text, as one that is no JSON is,
 * so no walk of it can overflow the stack.
 */
export async function readResult(
  content: ContentClient,
  report: {result: string | null},
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
