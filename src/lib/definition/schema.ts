// Named imports, not the `z` namespace: a namespace keeps all of zod (every locale) in the CLI bundle.
import {
  any,
  array,
  boolean,
  discriminatedUnion,
  enum as oneOf,
  type infer as Infer,
  literal,
  looseObject,
  number,
  record,
  strictObject,
  string,
  union,
  url,
} from 'zod'

/**
 * The zod schema of a job definition, version 0.1. It follows the tables of the spec's "Resources and their
 * fields" section to the letter: every object is closed (additional members rejected) except `meta`.
 * The same schema feeds `validateJobDefinition`, the JSON Schema of `gpunet job schema` and the docs.
 */

const stringOrStrings = union([string(), array(string())]).describe(
  'A string, or an array of strings (an empty array is accepted).',
)

const env = record(string(), string()).describe('Environment variables; values are strings.')

/** A URI as JSON Schema's `format: uri` means it: an absolute reference with a scheme. */
export const uriSchema = url()

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const
export const PORT_TYPES = ['web', 'api', 'webapi', 'websocket', 'none'] as const
export const OPERATION_TYPES = ['container/run', 'container/create-volume'] as const
export const RESOURCE_TYPES = ['S3', 'HF'] as const
export const LOGISTICS_TYPES = ['api', 'api-listen'] as const
export const TRIGGERS = ['cli', 'dashboard'] as const
export const DEFINITION_VERSION = '0.1'

const httpHealthCheck = strictObject({
  type: literal('http'),
  path: string(),
  method: oneOf(HTTP_METHODS),
  expected_status: number(),
  headers: record(string(), string()).optional(),
  body: any().optional(),
}).describe('HTTP health check: the port is ready when `method path` answers `expected_status`.')

const websocketHealthCheck = strictObject({
  type: literal('websocket'),
  expected_response: string(),
}).describe('Websocket health check: the port is ready when the socket answers `expected_response`.')

export const healthCheckSchema = discriminatedUnion('type', [httpHealthCheck, websocketHealthCheck])

export const exposedPortSchema = strictObject({
  port: number(),
  type: oneOf(PORT_TYPES).optional(),
  health_checks: array(healthCheckSchema).optional(),
}).describe('A port of the container served at the job’s public URL.')

const dockerCredentialsSchema = strictObject({
  username: string(),
  password: string(),
  email: string().optional(),
  server: string().optional().describe('Registry URL.'),
}).describe('Container registry credentials. Prefer "%%secrets.NAME%%" over a password written inline.')

const iamSchema = strictObject({
  ACCESS_KEY_ID: string().optional(),
  REGION: string().optional(),
  SECRET_ACCESS_KEY: string().optional(),
}).describe('Storage credentials. Prefer "%%secrets.NAME%%" over keys written inline.')

export const resourceSchema = strictObject({
  type: oneOf(RESOURCE_TYPES),
  target: string().describe('Path inside the container where the data is placed.'),
  url: uriSchema.optional().describe('Used for S3.'),
  bucket: string().optional(),
  files: array(string()).optional().describe('File names to load.'),
  repo: string().optional().describe('Model repository identifier, used for HF.'),
  IAM: iamSchema.optional(),
}).describe('External data loaded into the container.')

export const operationArgsSchema = strictObject({
  image: string().describe('Container image; a full image URL is recommended.'),
  cmd: stringOrStrings
    .optional()
    .describe('Command. A string runs under a bash shell; an array is passed word by word as given.'),
  gpu: boolean().optional(),
  expose: union([number(), array(exposedPortSchema)])
    .optional()
    .describe('A port number, or an array of exposed ports.'),
  entrypoint: stringOrStrings.optional(),
  env: env.optional(),
  work_dir: string().optional(),
  output: string().optional(),
  required_vram: number().optional(),
  resources: array(resourceSchema).optional(),
  authentication: strictObject({docker: dockerCredentialsSchema.optional()}).optional(),
})

export const operationSchema = strictObject({
  id: string().describe('Identifies the operation; unique within the job.'),
  type: oneOf(OPERATION_TYPES),
  args: operationArgsSchema,
})

const logisticsEntrySchema = strictObject({
  type: oneOf(LOGISTICS_TYPES),
  args: strictObject({endpoint: uriSchema}),
})

export const jobDefinitionSchema = strictObject({
  $schema: string()
    .optional()
    .describe('Editor hint only: the JSON Schema of this file. `gpunet job post` strips it before upload.'),
  version: literal(DEFINITION_VERSION).describe('Must be the string "0.1".'),
  type: literal('container'),
  logistics: strictObject({send: logisticsEntrySchema.optional(), receive: logisticsEntrySchema.optional()}).optional(),
  meta: looseObject({
    trigger: oneOf(TRIGGERS).optional(),
    system_resources: record(string(), union([string(), number()]))
      .optional()
      .describe('System constraints such as `required_vram` (GPU memory).'),
  }).optional(),
  global: strictObject({
    image: string().optional(),
    gpu: boolean().optional(),
    entrypoint: stringOrStrings.optional(),
    env: env.optional(),
    work_dir: string().optional(),
  })
    .optional()
    .describe(
      'Defaults applied to all operations, as the network’s nodes apply them: `env` under each operation’s own; ' +
        '`entrypoint` and `work_dir` where its own is unset or empty; a GPU when either asks for one.',
    ),
  ops: array(operationSchema).min(1).describe('The operations, run in order; at least one.'),
}).describe('A gpunet job definition (version 0.1).')

export type JobDefinition = Infer<typeof jobDefinitionSchema>
export type Operation = Infer<typeof operationSchema>
export type OperationArgs = Infer<typeof operationArgsSchema>
export type ExposedPort = Infer<typeof exposedPortSchema>
export type HealthCheck = Infer<typeof healthCheckSchema>
export type Resource = Infer<typeof resourceSchema>
