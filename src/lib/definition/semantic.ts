import {matchesJobDefinitionSchema} from './fast-path/generated.js'
import {type DefinitionIssue, makeIssue} from './issue.js'
import {isObject} from './paths.js'

/**
 * Rules a schema cannot say, run on the raw value so they are reported together with the schema's own
 * (the order Akash's SDL validation uses: shape first, then meaning, in one list of the same shape).
 */
export function semanticIssues(value: unknown): DefinitionIssue[] {
  const issues: DefinitionIssue[] = []
  const ops = isObject(value) ? value.ops : undefined
  if (!Array.isArray(ops)) return issues
  // A plain loop over a Set: this runs on every valid definition, on the fast path too.
  const seen = new Set<string>()
  for (let index = 0; index < ops.length; index++) {
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
 * True when the definition keeps every rule, decided by the code compiled from the zod schema at build time,
 * without loading zod; false says only "go ask zod", which decides and explains.
 */
export function passesCompiledCheck(value: unknown): boolean {
  return matchesJobDefinitionSchema(value) && semanticIssues(value).length === 0
}
