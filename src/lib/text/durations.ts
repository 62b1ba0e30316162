/** Durations as people write them on the command line: `90s`, `5m`, `1h30m`, `2d`. */

const UNIT_MS: Record<string, number> = {ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000}

/** The milliseconds of a duration written as `90s`, `5m`, `1h30m` or `2d`; null for any other text. */
export function durationMs(text: string): number | null {
  const trimmed = text.trim()
  if (!/^(\d+(ms|s|m|h|d))+$/.test(trimmed)) return null
  let total = 0
  for (const [, amount, unit] of trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(amount) * UNIT_MS[unit!]!
  return total
}
