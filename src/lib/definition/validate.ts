import {matchesJobDefinitionSchema} from './fast-path/generated.js'
import {type DefinitionIssue, makeIssue} from './issue.js'
import {isObject} from './paths.js'
import {type JobDefinition, jobDefinitionSchema} from './schema.js'
import {convertZodIssues} from './zod-issues.js'

/** The result of `validateJobDefinition`: the parsed definition, or every violation found. */
export type ValidationResult =
  | {success: true; data: JobDefinition; errors?: undefined}
  | {success: false; data?: undefined; errors: DefinitionIssue[]}

/**
 * Checks a job definition (an already parsed JSON value) against every rule of the spec.
 * Returns `{success: true, data}` or `{success: false, errors}` with all violations, not only the first.
 * A valid definition is checked by code compiled from the zod schema at build time, and `data` is then the
 * value itself; anything else goes to zod, which decides and words the errors.
 */
export function validateJobDefinition(value: unknown): ValidationResult {
  if (matchesJobDefinitionSchema(value) && semanticIssues(value).length === 0) {
    return {success: true, data: value as JobDefinition}
  }
  return validateWithZod(value)
}

/** The same verdict from the zod schema alone, with every violation in words; the fast path's reference. */
export function validateWithZod(value: unknown): ValidationResult {
  const parsed = jobDefinitionSchema.safeParse(value)
  const errors = parsed.success ? [] : convertZodIssues(parsed.error.issues, value, jobDefinitionSchema)
  errors.push(...semanticIssues(value))
  if (errors.length > 0 || !parsed.success) return {success: false, errors}
  return {success: true, data: parsed.data}
}

/**
 * Rules a schema cannot say, run on the raw value so they are reported together with the schema's own
 * (the order Akash's SDL validation uses: shape first, then meaning, in one list of the same shape).
 */
function semanticIssues(value: unknown): DefinitionIssue[] {
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
