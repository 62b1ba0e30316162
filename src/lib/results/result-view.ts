/**
 * One reader of every job result format gpunet meets, giving one normalized view (outcome, per-operation status,
 * exit code, times, logs): the network's flow state (`{status, opStates: [{operationId, logs: [{type, log,
 * timestamp}]}]}`, reference/network-job-plane.md §2), the network's pre-2025 format (`results[op] = [status,
 * steps]`, each step's `log: [[fd, text], ...]`), and gpunet's own documents of earlier versions
 * (`{status, ops: [{id, exitCode, stdout, stderr}]}`), still stored on existing localnets.
 */
import type {JobFailure} from './flow-state.js'

/** One line of an operation's output; `stream` and `time` are null where the format does not say. */
export interface ResultLine {
  stream: 'stdout' | 'stderr' | null
  time: string | null
  line: string
}

/** One operation in the normalized view. */
export interface ResultOperation {
  id: string
  status: string | null
  exitCode: number | null
  startedAt: string | null
  endedAt: string | null
  logs: ResultLine[]
  /** What the operation extracted (`results` of the flow state), or null. */
  results: Record<string, unknown> | null
  /** Lines the node dropped (a cap on the lines it keeps); 0 when none or unknown. */
  droppedLines: number
}

/** A result, whatever its format, as `job get`, `--wait` and the library show it. */
export interface ResultView {
  format: 'flow-state' | 'pre-2025' | 'gpunet-1'
  outcome: 'succeeded' | 'failed' | 'stopped' | null
  failure: JobFailure | null
  /**
   * Its node stopped it at its timeout: an operation says `diagnostics.reason.jobExpired` (a flow state). The
   * network's nodes then record `success`, so a job that ran until its timeout reads as succeeded.
   */
  timedOut: boolean
  startedAt: string | null
  endedAt: string | null
  ops: ResultOperation[]
}

/** The normalized view of a result document; null for a document in none of the known formats. */
export function resultView(document: unknown): ResultView | null {
  if (!isObject(document)) return null
  if (Array.isArray(document.opStates)) return flowStateView(document)
  if (isObject(document.results) && !Array.isArray(document.ops)) return legacyView(document)
  if (Array.isArray(document.ops)) return gpunetView(document)
  return null
}

function flowStateView(document: Record<string, unknown>): ResultView {
  const ops = (document.opStates as unknown[]).filter(isObject).map((op, index): ResultOperation => {
    const logs = Array.isArray(op.logs) ? op.logs.filter(isObject) : []
    const gpunet = isObject(op.gpunet) ? op.gpunet : {}
    return {
      id: text(op.operationId) ?? `op-${index}`,
      status: text(op.status),
      exitCode: num(op.exitCode),
      startedAt: time(op.startTime),
      endedAt: time(op.endTime),
      logs: logs.map((entry) => ({
        stream: entry.type === 'stdout' || entry.type === 'stderr' ? entry.type : null,
        time: text(entry.timestamp),
        line: stripNewline(text(entry.log) ?? ''),
      })),
      results: isObject(op.results) ? op.results : null,
      droppedLines: num(gpunet.droppedLines) ?? 0,
    }
  })
  const status = text(document.status)
  const gpunet = isObject(document.gpunet) ? document.gpunet : {}
  const failed = ops.find((op) => op.status === 'failed')
  const failure =
    status === 'failed'
      ? (failureOf(gpunet.failure) ??
        (failed
          ? {
              code: 'operation_failed',
              message: `Operation ${failed.id} exited with code ${failed.exitCode ?? 'unknown'}.`,
              op: failed.id,
              ...(failed.exitCode === null ? {} : {exitCode: failed.exitCode}),
            }
          : {code: 'failed', message: firstError(document.errors) ?? 'The node reported the job failed.'}))
      : null
  const timedOut = (document.opStates as unknown[]).some(
    (op) =>
      isObject(op) &&
      isObject(op.diagnostics) &&
      isObject(op.diagnostics.reason) &&
      op.diagnostics.reason.jobExpired === true,
  )
  return {
    format: 'flow-state',
    outcome: outcomeOf(status),
    failure,
    timedOut,
    startedAt: time(document.startTime),
    endedAt: time(document.endTime),
    ops,
  }
}

function legacyView(document: Record<string, unknown>): ResultView {
  const ops = Object.entries(document.results as Record<string, unknown>).map(([id, entry]): ResultOperation => {
    const [status, steps] = Array.isArray(entry) ? entry : [entry, []]
    const logs: ResultLine[] = []
    for (const step of Array.isArray(steps) ? steps : []) {
      if (!isObject(step) || !Array.isArray(step.log)) continue
      for (const pair of step.log) {
        if (!Array.isArray(pair)) continue
        const [fd, chunk] = pair as [unknown, unknown]
        const stream = fd === 1 ? 'stdout' : fd === 2 ? 'stderr' : null
        for (const line of splitLines(text(chunk) ?? '')) logs.push({stream, time: null, line})
      }
    }
    const exitCode = Array.isArray(steps) ? num((steps as unknown[]).filter(isObject).at(-1)?.exitCode) : null
    return {id, status: text(status), exitCode, startedAt: null, endedAt: null, logs, results: null, droppedLines: 0}
  })
  const failed = ops.find((op) => op.status === 'failed')
  const status = text(document.status) ?? (failed ? 'failed' : ops.length > 0 ? 'success' : null)
  return {
    format: 'pre-2025',
    outcome: outcomeOf(status),
    timedOut: false,
    failure:
      status === 'failed'
        ? {
            code: 'operation_failed',
            message: failed ? `Operation ${failed.id} failed.` : 'The node reported the job failed.',
            ...(failed ? {op: failed.id} : {}),
          }
        : null,
    startedAt: null,
    endedAt: null,
    ops,
  }
}

function gpunetView(document: Record<string, unknown>): ResultView {
  const ops = (document.ops as unknown[]).filter(isObject).map((op): ResultOperation => {
    const logs: ResultLine[] = []
    for (const stream of ['stdout', 'stderr'] as const) {
      for (const line of splitLines(text(op[stream]) ?? '')) logs.push({stream, time: null, line})
    }
    const exitCode = num(op.exitCode)
    return {
      id: text(op.id) ?? '',
      status: op.stopped === true ? 'stopped' : exitCode === 0 ? 'success' : 'failed',
      exitCode,
      startedAt: text(op.startedAt),
      endedAt: text(op.endedAt),
      logs,
      results: null,
      droppedLines: 0,
    }
  })
  const status = text(document.status)
  return {
    format: 'gpunet-1',
    outcome: outcomeOf(status),
    timedOut: false,
    failure: status === 'failed' ? (failureOf(document.error) ?? {code: 'failed', message: 'The job failed.'}) : null,
    startedAt: ops[0]?.startedAt ?? null,
    endedAt: ops.at(-1)?.endedAt ?? null,
    ops,
  }
}

function outcomeOf(status: string | null): ResultView['outcome'] {
  if (status === 'success') return 'succeeded'
  if (status === 'failed') return 'failed'
  if (status === 'stopped') return 'stopped'
  return null
}

function failureOf(value: unknown): JobFailure | null {
  if (!isObject(value) || typeof value.code !== 'string' || typeof value.message !== 'string') return null
  return value as unknown as JobFailure
}

function firstError(errors: unknown): string | null {
  if (!Array.isArray(errors) || errors.length === 0) return null
  const first: unknown = errors[0]
  if (typeof first === 'string') return first
  if (isObject(first) && typeof first.message === 'string') return first.message
  return null
}

/** Milliseconds since the epoch (the flow state's times) or text, as an ISO time; null otherwise. */
function time(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const date = new Date(value)
    return Number.isNaN(date.getTime()) ? null : date.toISOString()
  }
  return typeof value === 'string' ? value : null
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null
}

function stripNewline(line: string): string {
  return line.endsWith('\r\n') ? line.slice(0, -2) : line.endsWith('\n') ? line.slice(0, -1) : line
}

/** The lines of a text; a final newline ends the last line rather than starting an empty one. */
function splitLines(chunk: string): string[] {
  if (chunk === '') return []
  const lines = chunk.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
