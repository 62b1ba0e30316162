import {assertNestingDepth} from '../text/nesting.js'

/** A step into a JSON value: an object member name or an array index. */
export type PathSegment = string | number

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** Formats segments as a person reads them: `ops[0].args.image`, `env["MY-KEY"]`; the root is "". */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = ''
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`
    else if (IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`
    else out += `[${JSON.stringify(segment)}]`
  }
  return out
}

/** Formats segments as an RFC 6901 JSON pointer: `/ops/0/args/image`; the root is "". */
export function toPointer(segments: readonly PathSegment[]): string {
  return segments.map((s) => `/${String(s).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')
}

/** Parses an RFC 6901 JSON pointer back into segments (all strings; array indices stay decimal strings). */
export function fromPointer(pointer: string): string[] {
  if (pointer === '') return []
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
}

/** Reads the value at `segments` inside `root`, or undefined when any step is missing. */
export function valueAt(root: unknown, segments: readonly PathSegment[]): unknown {
  let current: unknown = root
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined
    current = (current as Record<string, unknown>)[segment as string]
  }
  return current
}

/** True for a plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Calls `visit` with every string value (not member names) inside a JSON value, and the path to it. A value
 * nested past MAX_NESTING_DEPTH is refused (GpunetError too_deep) before the walk, which recurses.
 */
export function visitStrings(value: unknown, visit: (text: string, path: PathSegment[]) => void): void {
  assertNestingDepth(value, 'the job definition')
  walkStrings(value, visit, [])
}

function walkStrings(value: unknown, visit: (text: string, path: PathSegment[]) => void, path: PathSegment[]): void {
  if (typeof value === 'string') visit(value, path)
  else if (Array.isArray(value)) value.forEach((item, i) => walkStrings(item, visit, [...path, i]))
  else if (isObject(value)) for (const [k, item] of Object.entries(value)) walkStrings(item, visit, [...path, k])
}
