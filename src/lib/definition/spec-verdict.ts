import type {JobDefinition} from './schema.js'
import {passesCompiledCheck} from './semantic.js'
import type {ValidationResult} from './validate.js'

/**
 * The spec's verdict on a parsed definition, as `validateJobDefinition` gives it, but loading zod (a fifth of a
 * command's start) only for a definition the compiled check refuses, as `checkDefinitionText` does.
 */
export async function specVerdict(value: unknown): Promise<ValidationResult> {
  if (passesCompiledCheck(value)) return {success: true, data: value as JobDefinition}
  return (await import('./validate.js')).validateJobDefinition(value)
}
