import {toJSONSchema} from 'zod'

import {jobDefinitionSchema} from './schema.js'

/** Where the published schema says it lives; editors only use it as an identifier. */
export const JOB_SCHEMA_ID = 'https://gpunet.dev/schema/job-definition-0.1.json'

/** The JSON Schema (draft 2020-12) of a job definition, generated from the zod schema the validator uses. */
export function jobDefinitionJsonSchema(): Record<string, unknown> {
  const generated = toJSONSchema(jobDefinitionSchema, {target: 'draft-2020-12'}) as Record<string, unknown>
  const {$schema, ...rest} = generated
  return {$schema, $id: JOB_SCHEMA_ID, title: 'gpunet job definition 0.1', ...rest}
}
