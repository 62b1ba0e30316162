/** `--since`: a duration back from now (`90s`, `5m`, `1h30m`, `2d`) or a point in time (ISO 8601). */
import {durationMs} from '../text/durations.js'
import {ExitCode, GpunetError} from '../errors.js'

/** The unix ms `--since` names, counted back from `nowMs` for a duration. */
export function parseSince(text: string, nowMs = Date.now()): number {
  const trimmed = text.trim()
  const duration = durationMs(trimmed)
  if (duration !== null) return nowMs - duration
  if (/^\d{4}-\d{2}-\d{2}/.test(trimmed) && !Number.isNaN(Date.parse(trimmed))) return Date.parse(trimmed)
  throw new GpunetError('invalid_since', `--since ${JSON.stringify(text)} is neither a duration nor a time`, {
    exitCode: ExitCode.USAGE,
    hint: 'give a duration such as 30s, 5m, 1h30m or 2d, or a time such as 2026-11-25T10:00:00Z',
  })
}
