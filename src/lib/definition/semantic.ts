import {MAX_NESTING_DEPTH, tooDeepAt} from '../text/nesting.js'
import {matchesJobDefinitionSchema} from './fast-path/generated.js'
import {type DefinitionIssue, makeIssue} from './issue.js'
import {isObject, type PathSegment} from './paths.js'

/**
 * Rules a schema cannot say (unique operation ids, exposed ports within TCP's range), run on the raw value so they are reported together with the schema's own
 * (the order Akash's SDL validation uses: shape first, then meaning, in one list of the same shape).
 */
export function semanticIssues(value: unknown): DefinitionIssue[] {
  const issues: DefinitionIssue[] = []
  const ops = isObject(value) ? value.ops : undefined
  if (!Array.isArray(ops)) return issues
  // A plain loop over a Set: this runs on every valid definition, on the fast path too.
  const seen = new Set<string>()
  for (let index = 0; index < ops.length; index++) {
    const args = isObject(ops[index]) ? ops[index].args : undefined
    if (isObject(args) && args.expose !== undefined) portIssues(args.expose, ['ops', index, 'args', 'expose'], issues)
    const id = isObject(ops[index]) ? ops[index].id : undefined
    if (typeof id !== 'string') continue
    if (!seen.has(id)) {
      seen.add(id)
      continue
    }
    const first = ops.findIndex((op) => isObject(op) && op.id === id)
    issues.push(
      makeIssue(
        ['ops', index, 'id'],
        'duplicate_id',
        `operation id \`${id}\` is already used by ops[${first}]; ids must be unique within the job`,
      ),
    )
  }
  return issues
}

/**
 * An exposed port must be a TCP port: the node maps it as one, so a job exposing 99999 would be paid for and then
 * fail at the node. Refused here, before anything is paid; a port of another type is the schema's to report.
 */
function portIssues(expose: unknown, path: PathSegment[], issues: DefinitionIssue[]): void {
  const ports: [unknown, PathSegment[]][] =
    typeof expose === 'number'
      ? [[expose, path]]
      : Array.isArray(expose)
        ? expose.map((p, k) => [isObject(p) ? p.port : undefined, [...path, k, 'port']])
        : []
  for (const [port, at] of ports) {
    if (typeof port !== 'number' || (Number.isInteger(port) && port >= 1 && port <= 65_535)) continue
    issues.push(
      makeIssue(
        at,
        'port_out_of_range',
        `port ${port} is not a TCP port (a whole number from 1 to 65535)`,
        "expose the port the container listens on, e.g. 8080; the node serves it at the job's service URL",
      ),
    )
  }
}

/**
 * True when the definition keeps every rule, the nesting limit included, decided by the code compiled from the zod
 * schema at build time, without loading zod; false says only "go ask zod", which decides and explains. The compiled
 * code follows the schema, never the value's own depth, so it is safe on a value of any depth and runs first.
 */
export function passesCompiledCheck(value: unknown): boolean {
  return matchesJobDefinitionSchema(value) && freeFormWithinLimit(value) && semanticIssues(value).length === 0
}

/**
 * Where a definition of the schema's shape holds values of any shape, and at what depth (the definition is 1):
 * `meta`'s members (meta is a loose object, at 2) and each health check's `body` (ops[].args.expose[]
 * .health_checks[].body). Everywhere else the schema itself bounds the depth (at 9), far below the limit, so a
 * definition the compiled check passed needs only these measured. test/lib/definition/nesting.e2e.test.ts reads the
 * schema's free-form places from its JSON Schema and fails when this list misses one.
 */
export const FREE_FORM_PLACES = [
  {path: 'meta', depth: 2},
  {path: 'ops[].args.expose[].health_checks[].body', depth: 9},
] as const

/** The free-form values of a definition that passed the compiled check nest within the one limit. */
function freeFormWithinLimit(value: unknown): boolean {
  const definition = value as {
    meta?: unknown
    ops: {args: {expose?: unknown}}[]
  }
  if (tooDeepAt(definition.meta, MAX_NESTING_DEPTH - 1) !== null) return false
  for (const op of definition.ops) {
    const expose = op.args.expose
    if (!Array.isArray(expose)) continue
    for (const port of expose as {health_checks?: {body?: unknown}[]}[]) {
      for (const check of port.health_checks ?? []) {
        if (check.body !== undefined && tooDeepAt(check.body, MAX_NESTING_DEPTH - 8) !== null) return false
      }
    }
  }
  return true
}
