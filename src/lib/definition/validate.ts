import {type DefinitionIssue, nestingIssue} from './issue.js'
import {type JobDefinition, jobDefinitionSchema} from './schema.js'
import {passesCompiledCheck, semanticIssues} from './semantic.js'
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
  // The compiled check measures only the free-form members' depth; anything it refuses is measured whole (in
  // validateWithZod) before zod walks it.
  if (passesCompiledCheck(value)) {
    return {success: true, data: value as JobDefinition}
  }
  return validateWithZod(value)
}

/** The same verdict from the zod schema alone, with every violation in words; the fast path's reference. */
export function validateWithZod(value: unknown): ValidationResult {
  const deep = nestingIssue(value)
  if (deep) return {success: false, errors: [deep]}
  const parsed = jobDefinitionSchema.safeParse(value)
  const errors = parsed.success ? [] : convertZodIssues(parsed.error.issues, value, jobDefinitionSchema)
  errors.push(...semanticIssues(value))
  if (errors.length > 0 || !parsed.success) return {success: false, errors}
  return {success: true, data: parsed.data}
}
