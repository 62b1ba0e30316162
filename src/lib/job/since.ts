/** `--since`: a duration back from now (`90s`, `5m`, `1h30m`, `2d`) or a point in time (ISO 8601). */
import {ExitCode, GpunetError} from '../errors.js'

const UNIT_MS: Record<string, number> = {ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000}

/** The milliseconds of a duration written as `90s`, `5m`, `1h30m` or `2d`; null for any other text. */
export function durationMs(text: string): number | null {
  const trimmed = text.trim()
  if (!/^(\d+(ms|s|m|h|d))+$/.test(trimmed)) return null
  let total = 0
  for (const [, amount, unit] of trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(amount) * UNIT_MS[unit!]!
  return total
}

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
