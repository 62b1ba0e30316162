/**
 * The one nesting limit of gpunet (docs/job-definitions.md "Nesting depth"): job definitions and the JSON the
 * services take may nest arrays and objects at most MAX_NESTING_DEPTH deep. Past it a value is refused, so no
 * recursive walk (ours, zod's, a caller's) can overflow the stack, and walks that carry their path stay linear.
 * The CLI, the library and the services all use it; measuring stops at the limit, so it never overflows itself.
 */
import {ExitCode, GpunetError} from '../errors.js'

/** The deepest nesting of arrays and objects a JSON value may have; the top-level value is at depth 1. */
export const MAX_NESTING_DEPTH = 64

/** The largest `max` tooDeepAt takes: its walk recurses at most max + 1 calls deep, which must fit the stack. */
const LARGEST_MAX = 1024

/**
 * The path (member names and indexes) to the first array or object nested deeper than `max` (at most 1024), or
 * null when none is. Linear in the value's size and never deeper than `max` + 1 calls, whatever the value's depth:
 * the walk stops where the limit is passed. It copies nothing: the path is built only for a value refused.
 */
export function tooDeepAt(value: unknown, max = MAX_NESTING_DEPTH): (string | number)[] | null {
  if (!(max >= 0 && max <= LARGEST_MAX)) throw new RangeError(`a nesting limit is 0 to ${LARGEST_MAX}, not ${max}`)
  if (!nestsDeeper(value, max)) return null
  const path: (string | number)[] = []
  pathDeeper(value, max, path)
  return path
}

/** Whether `value` holds arrays or objects more than `levels` deep; the hot path of every check, so no allocation. */
function nestsDeeper(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (levels === 0) return true
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (nestsDeeper(value[i], levels - 1)) return true
    return false
  }
  // for...in walks inherited enumerable members too: a superset of the own members JSON has, never fewer.
  for (const key in value) if (nestsDeeper((value as Record<string, unknown>)[key], levels - 1)) return true
  return false
}

/** Fills `path` with the way to the first value past `levels` (which nestsDeeper found); true once it is. */
function pathDeeper(value: unknown, levels: number, path: (string | number)[]): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (levels === 0) return true
  const keys: (string | number)[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value)
  for (const key of keys) {
    path.push(key)
    if (pathDeeper((value as Record<string | number, unknown>)[key], levels - 1, path)) return true
    path.pop()
  }
  return false
}

/** Throws a GpunetError (invalid_input, exit 3) when `value` nests deeper than MAX_NESTING_DEPTH. */
export function assertNestingDepth(value: unknown, what: string): void {
  const path = tooDeepAt(value)
  if (path) throw nestingTooDeep(what, path)
}

/** The error for a value nested past the limit, naming where. */
export function nestingTooDeep(what: string, path: (string | number)[]): GpunetError {
  return new GpunetError(
    'too_deep',
    `${what} nests arrays and objects more than ${MAX_NESTING_DEPTH} deep (at ${path.slice(0, 8).join('.')}…)`,
    {exitCode: ExitCode.INVALID_INPUT},
  )
}
