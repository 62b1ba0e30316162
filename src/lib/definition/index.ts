export {type FileCheck, type FileReport, type LocatedIssue, checkDefinitionFile, checkDefinitionText} from './check.js'
export {type DefinitionIssue, type IssueCode} from './issue.js'
export {JOB_SCHEMA_ID, jobDefinitionJsonSchema} from './json-schema.js'
export {lintJobDefinition} from './lint.js'
export {formatPath, toPointer} from './paths.js'
export {
  type ExposedPort,
  type HealthCheck,
  type JobDefinition,
  jobDefinitionSchema,
  type Operation,
  type OperationArgs,
  type Resource,
} from './schema.js'
export {findSecretReferences, SECRET_NAME_PATTERN, SECRET_REFERENCE, secretReference} from './secret-refs.js'
export {type ParsedSource, parseSource, type SourcePosition} from './source.js'
export {validateJobDefinition, type ValidationResult} from './validate.js'
