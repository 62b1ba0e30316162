import {z} from 'zod'

/**
 * The zod schema of a job definition, version 0.1. It follows the tables of the spec's "Resources and their
 * fields" section to the letter: every object is closed (additional members rejected) except `meta`.
 * The same schema feeds `validateJobDefinition`, the JSON Schema of `gpunet job schema` and the docs.
 */

const stringOrStrings = z
  .union([z.string(), z.array(z.string())])
  .describe('A string, or an array of strings (an empty array is accepted).')

const env = z.record(z.string(), z.string()).describe('Environment variables; values are strings.')

/** A URI as JSON Schema's `format: uri` means it: an absolute reference with a scheme. */
const uri = z.url()

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const
export const PORT_TYPES = ['web', 'api', 'webapi', 'websocket', 'none'] as const
export const OPERATION_TYPES = ['container/run', 'container/create-volume'] as const
export const RESOURCE_TYPES = ['S3', 'HF'] as const
export const LOGISTICS_TYPES = ['api', 'api-listen'] as const
export const TRIGGERS = ['cli', 'dashboard'] as const
export const DEFINITION_VERSION = '0.1'

const httpHealthCheck = z
  .strictObject({
    type: z.literal('http'),
    path: z.string(),
    method: z.enum(HTTP_METHODS),
    expected_status: z.number(),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.any().optional(),
  })
  .describe('HTTP health check: the port is ready when `method path` answers `expected_status`.')

const websocketHealthCheck = z
  .strictObject({
    type: z.literal('websocket'),
    expected_response: z.string(),
  })
  .describe('Websocket health check: the port is ready when the socket answers `expected_response`.')

export const healthCheckSchema = z.discriminatedUnion('type', [httpHealthCheck, websocketHealthCheck])

export const exposedPortSchema = z
  .strictObject({
    port: z.number(),
    type: z.enum(PORT_TYPES).optional(),
    health_checks: z.array(healthCheckSchema).optional(),
  })
  .describe('A port of the container served at the job’s public URL.')

const dockerCredentialsSchema = z
  .strictObject({
    username: z.string(),
    password: z.string(),
    email: z.string().optional(),
    server: z.string().optional().describe('Registry URL.'),
  })
  .describe('Container registry credentials. Prefer "%%secrets.NAME%%" over a password written inline.')

const iamSchema = z
  .strictObject({
    ACCESS_KEY_ID: z.string().optional(),
    REGION: z.string().optional(),
    SECRET_ACCESS_KEY: z.string().optional(),
  })
  .describe('Storage credentials. Prefer "%%secrets.NAME%%" over keys written inline.')

export const resourceSchema = z
  .strictObject({
    type: z.enum(RESOURCE_TYPES),
    target: z.string().describe('Path inside the container where the data is placed.'),
    url: uri.optional().describe('Used for S3.'),
    bucket: z.string().optional(),
    files: z.array(z.string()).optional().describe('File names to load.'),
    repo: z.string().optional().describe('Model repository identifier, used for HF.'),
    IAM: iamSchema.optional(),
  })
  .describe('External data loaded into the container.')

export const operationArgsSchema = z.strictObject({
  image: z.string().describe('Container image; a full image URL is recommended.'),
  cmd: stringOrStrings
    .optional()
    .describe('Command. A string runs under a bash shell; an array is passed word by word as given.'),
  gpu: z.boolean().optional(),
  expose: z
    .union([z.number(), z.array(exposedPortSchema)])
    .optional()
    .describe('A port number, or an array of exposed ports.'),
  entrypoint: stringOrStrings.optional(),
  env: env.optional(),
  work_dir: z.string().optional(),
  output: z.string().optional(),
  required_vram: z.number().optional(),
  resources: z.array(resourceSchema).optional(),
  authentication: z.strictObject({docker: dockerCredentialsSchema.optional()}).optional(),
})

export const operationSchema = z.strictObject({
  id: z.string().describe('Identifies the operation; unique within the job.'),
  type: z.enum(OPERATION_TYPES),
  args: operationArgsSchema,
})

const logisticsEntrySchema = z.strictObject({
  type: z.enum(LOGISTICS_TYPES),
  args: z.strictObject({endpoint: uri}),
})

export const jobDefinitionSchema = z
  .strictObject({
    $schema: z
      .string()
      .optional()
      .describe('Editor hint only: the JSON Schema of this file. `gpunet job post` strips it before upload.'),
    version: z.literal(DEFINITION_VERSION).describe('Must be the string "0.1".'),
    type: z.literal('container'),
    logistics: z
      .strictObject({send: logisticsEntrySchema.optional(), receive: logisticsEntrySchema.optional()})
      .optional(),
    meta: z
      .looseObject({
        trigger: z.enum(TRIGGERS).optional(),
        system_resources: z
          .record(z.string(), z.union([z.string(), z.number()]))
          .optional()
          .describe('System constraints such as `required_vram` (GPU memory).'),
      })
      .optional(),
    global: z
      .strictObject({
        image: z.string().optional(),
        gpu: z.boolean().optional(),
        entrypoint: stringOrStrings.optional(),
        env: env.optional(),
        work_dir: z.string().optional(),
      })
      .optional()
      .describe('Defaults applied to all operations; each operation’s own args override them.'),
    ops: z.array(operationSchema).min(1).describe('The operations, run in order; at least one.'),
  })
  .describe('A gpunet job definition (version 0.1).')

export type JobDefinition = z.infer<typeof jobDefinitionSchema>
export type Operation = z.infer<typeof operationSchema>
export type OperationArgs = z.infer<typeof operationArgsSchema>
export type ExposedPort = z.infer<typeof exposedPortSchema>
export type HealthCheck = z.infer<typeof healthCheckSchema>
export type Resource = z.infer<typeof resourceSchema>
