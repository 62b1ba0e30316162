/**
 * The one nesting limit of gpunet (docs/job-definitions.md "Nesting depth"): job definitions and the JSON the
 * services take may nest arrays and objects at most MAX_NESTING_DEPTH deep. Past it a value is refused, so no
 * recursive walk (ours, zod's, a caller's) can overflow the stack, and walks that carry their path stay linear.
 * The CLI, the library and the services all use it; measuring is iterative, so it never overflows itself.
 */
import {ExitCode, GpunetError} from './errors.js'

/** The deepest nesting of arrays and objects a JSON value may have; the top-level value is at depth 1. */
export const MAX_NESTING_DEPTH = 64

/**
 * The path (member names and indexes) to the first array or object nested deeper than `max`, or null when
 * none is. Iterative and linear in the value's size.
 */
export function tooDeepAt(value: unknown, max = MAX_NESTING_DEPTH): (string | number)[] | null {
  const stack: {value: unknown; depth: number; path: (string | number)[]}[] = [{value, depth: 1, path: []}]
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (typeof item.value !== 'object' || item.value === null) continue
    if (item.depth > max) return item.path
    // The path is built only for the way down; a deep value is refused before it costs more than max steps.
    const entries = Array.isArray(item.value) ? item.value.entries() : Object.entries(item.value)
    for (const [key, child] of entries) {
      if (typeof child === 'object' && child !== null)
        stack.push({value: child, depth: item.depth + 1, path: [...item.path, key]})
    }
  }
  return null
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
