/**
 * The client of a deployment manager's HTTP API: the network's own routes, bodies and objects (@nosana/api), plus
 * gpunet's API keys, on the API client core (http/api-client.ts): every answer is a stranger's, read up to a bound,
 * checked with the zod schemas here, objects kept with all their members (the network's snake_case names) for
 * `--json`. The deployments routes are sent as `/api/deployments/...`, which every gpunet manager and the network's
 * until 2026 serve; a manager that answers that such a route does not exist (the network's of 2026, which dropped
 * the `/api`) is asked again under `/deployments/...`, and that spelling is kept for it (docs/deployment-manager.md,
 * "Routes").
 */
import {z} from 'zod'

import type {PlacementNeed} from '../../market/jobs/placement.js'

import {ExitCode, type ExitCodeValue, GpunetError} from '../../errors.js'
import {
  type Answer,
  ApiClient,
  type ApiClientOptions,
  type ApiService,
  type AuthHeaders,
  remoteText,
  type RequestOptions,
  segment,
} from '../../http/api-client.js'

/** The most replicas gpunet asks for (the network sets no maximum). */
export const MAX_REPLICAS = 100

/**
 * A scale's replica count, 0 to MAX_REPLICAS (0 keeps the deployment running with no job, nothing spent), from a
 * number or the digits of a command's argument; else exit 2 with nothing sent.
 */
export function checkScaleReplicas(given: number | string): number {
  const replicas = typeof given === 'string' ? (/^[+-]?\d{1,15}$/.test(given.trim()) ? Number(given) : NaN) : given
  if (!Number.isSafeInteger(replicas) || replicas < 0 || replicas > MAX_REPLICAS) {
    const shown = typeof given === 'string' ? JSON.stringify(given) : String(given)
    throw new GpunetError(
      'invalid_replicas',
      `replicas ${shown} is not a whole number from 0 to ${MAX_REPLICAS}: a deployment scales to 0 to ${MAX_REPLICAS} replicas`,
      {
        exitCode: ExitCode.USAGE,
        hint: `give a whole number from 0 (running with no job) to ${MAX_REPLICAS}; nothing was changed`,
      },
    )
  }
  return replicas
}

const text = z.string().max(10_000)
const time = z.string().max(100)

/** The network's Deployment object (components.schemas.Deployment); members beyond these are kept as sent. */
export const deploymentSchema = z.looseObject({
  id: z.string().min(1).max(100),
  name: text,
  vault: z.string().max(100),
  market: z.string().max(100),
  owner: z.string().max(100),
  status: z.string().max(40),
  replicas: z.number().int().nonnegative(),
  timeout: z.number().nonnegative(),
  strategy: z.string().max(40),
  endpoints: z
    .array(z.looseObject({opId: text, port: z.union([z.number(), z.string().max(100)]), url: text}))
    .max(1000)
    .optional(),
  active_revision: z.number().optional(),
  active_jobs: z.number().optional(),
  created_at: time,
  updated_at: time,
})
export type Deployment = z.infer<typeof deploymentSchema>

/** A row of `/:id/jobs` (components.schemas.Job). */
export const deploymentJobSchema = z.looseObject({
  job: z.string().min(1).max(100),
  tx: z.string().max(200).optional(),
  deployment: z.string().max(100).optional(),
  market: z.string().max(100).optional(),
  node: z.string().max(100).nullable().optional(),
  revision: z.number().optional(),
  state: z.union([z.string().max(40), z.number()]),
  time_start: z.number().nullable().optional(),
  created_at: time.optional(),
  updated_at: time.optional(),
})
export type DeploymentJob = z.infer<typeof deploymentJobSchema>

/** An event of `/:id/events` (components.schemas.Event). */
export const deploymentEventSchema = z.looseObject({
  category: z.string().max(40),
  deploymentId: z.string().max(100).optional(),
  type: z.string().max(100),
  message: text,
  tx: z.string().max(200).nullable().optional(),
  created_at: time,
})
export type DeploymentEvent = z.infer<typeof deploymentEventSchema>

const pagination = z.looseObject({
  cursor_next: z.string().max(1000).nullable(),
  cursor_prev: z.string().max(1000).nullable().optional(),
  total_items: z.number().optional(),
})
export type Pagination = z.infer<typeof pagination>

/**
 * A page as the network's API answers it (`{<name>: [...], pagination}`), or a bare list, as a manager without
 * pagination may: read as one last page.
 */
function page<N extends string, T extends z.ZodType>(name: N, item: T) {
  const list = z.array(item).max(1000)
  return z
    .union([
      z.looseObject({[name]: list, pagination} as {[K in N]: typeof list} & {pagination: typeof pagination}),
      list,
    ])
    .transform((answer) =>
      Array.isArray(answer)
        ? ({[name]: answer, pagination: {cursor_next: null}} as unknown as {[K in N]: z.infer<T>[]} & {
            pagination: Pagination
          })
        : (answer as unknown as {[K in N]: z.infer<T>[]} & {pagination: Pagination}),
    )
}

const listAnswer = z.looseObject({deployments: z.array(deploymentSchema).max(1000), pagination})
const jobsAnswer = page('jobs', deploymentJobSchema)
const eventsAnswer = page('events', deploymentEventSchema)
const statusAnswer = z.looseObject({status: z.string().max(40), updated_at: time.optional()})
const replicasAnswer = z.looseObject({replicas: z.number().int().nonnegative(), updated_at: time.optional()})
/** `update-market`'s answer: the network's manager's members; gpunet's adds the market a move under way leaves. */
const marketAnswer = z.looseObject({
  market: z.string().min(1).max(100),
  move_from: z.string().max(100).nullable().optional(),
  status: z.string().max(40).optional(),
  updated_at: time.optional(),
})
const revisionAnswer = z.looseObject({active_revision: z.number().int(), updated_at: time.optional()})
const units = z.string().regex(/^\d{1,40}$/)
const policyAnswer = z.looseObject({
  min_replicas: z.number().int().nonnegative(),
  max_replicas: z.number().int().nonnegative(),
  target_concurrency: z.number().positive(),
  scale_down_after: z.number().nonnegative(),
})
/** gpunet's `GET /:id/autoscale` (manager/autoscale-status.ts): the policy, the traffic, the spend and the vault's reach. */
export const autoscaleStatusSchema = z.looseObject({
  policy: policyAnswer.nullable(),
  signal: z.looseObject({in_flight: z.number().nonnegative(), held: z.number().nonnegative(), at: time}).nullable(),
  replicas: z.number().int().nonnegative(),
  active_jobs: z.number().int().nonnegative(),
  spend: z.looseObject({token_base_units: units, fee_lamports: units, budget_base_units: units.nullable()}),
  burn_rate_per_hour: units,
  vault: z.looseObject({
    address: z.string().max(100),
    token_base_units: units,
    burn_rate_per_hour: units,
    deployments: z.number().int().nonnegative(),
    lasts_seconds: z.number().nonnegative().nullable(),
  }),
})
export type AutoscaleStatusAnswer = z.infer<typeof autoscaleStatusSchema>
const headerAnswer = z.looseObject({header: z.string().min(1).max(2000)})
const transactionAnswer = z.looseObject({transaction: z.string().min(1).max(10_000).nullable()})

/** An API key as listed (the key itself is shown once, when it is made). */
export const apiKeySchema = z.looseObject({
  id: z.union([z.string().min(1).max(100), z.number()]),
  name: z.string().max(200).nullable().optional(),
  created_at: z.union([time, z.number()]),
})
export type ApiKey = z.infer<typeof apiKeySchema>
const newApiKey = apiKeySchema.extend({key: z.string().min(8).max(500)})
const apiKeysAnswer = z.union([z.array(apiKeySchema).max(1000), z.looseObject({keys: z.array(apiKeySchema).max(1000)})])

/** The create body the network's API takes (DeploymentCreateBody), plus gpunet's localnet-only `time_scale`. */
export interface CreateBody {
  name: string
  market: string
  replicas: number
  /** Minutes. */
  timeout: number
  strategy: string
  job_definition: unknown
  autostart?: boolean
  time_scale?: number
  /** SCHEDULED: a 5-field cron. */
  schedule?: string
  /** INFINITE: seconds before a job's end its replacement is listed; minutes a new job has to come online. */
  rotation_time?: number
  startup_timeout?: number
  /** One of the owner's vaults to pay from, or new_vault for one of its own; neither: the owner's shared vault. */
  vault?: string
  new_vault?: boolean
  /** gpunet's: a replica QUEUED this many seconds moves the deployment to the next market that fits `need`. */
  queue_timeout?: number
  need?: PlacementNeed
  /** gpunet's: the autoscaling policy (autoscale/policy.ts) and the budget in tokens. */
  autoscale?: Record<string, number>
  budget?: number
}

/** The filters of a page of a list. */
export interface PageQuery {
  cursor?: string
  limit?: 10 | 20 | 50 | 100
  sort_order?: 'asc' | 'desc'
  [filter: string]: string | number | undefined
}

/** How a client treats what it sends (the core's options), and what its 401 hint names. */
export interface ClientOptions extends Omit<ApiClientOptions, 'auth' | 'renewAuth'> {
  /** The API key setting's variable. */
  keyHint?: string
}

/** The body of `duplicate` (the network's): each member optional, the source's own when absent. */
export interface DuplicateBody {
  name?: string
  market?: string
  autostart?: boolean
}

/** The deployments routes as this client writes them; a manager that has them without the `/api` gets them so. */
const DEPLOYMENTS = '/api/deployments'

/** The managers (by URL) found to serve the deployments routes without the `/api`: asked so from then on. */
const WITHOUT_API = new Set<string>()

/**
 * True when a 404 says the route does not exist rather than that a deployment does not: gpunet's `no_route`,
 * fastify's own "Route GET:/... not found" (the network's manager's), or a page that is no JSON (a proxy's): a
 * manager's refusals of a deployment or a vault are JSON.
 */
export function isMissingRoute(answer: Pick<Answer, 'status' | 'text'>): boolean {
  if (answer.status !== 404) return false
  let body: unknown
  try {
    body = JSON.parse(answer.text)
  } catch {
    return true
  }
  if (typeof body !== 'object' || body === null) return true
  const {error, message} = body as {error?: unknown; message?: unknown}
  if (typeof error === 'object' && error !== null && (error as {code?: unknown}).code === 'no_route') return true
  return typeof message === 'string' && /^Route [A-Z]+:\S* not found$/.test(message)
}

/** A manager's deployment API at `url` (its origin), authenticated by `auth`. */
export class DeploymentClient extends ApiClient {
  constructor(url: string, auth: AuthHeaders, {keyHint, ...options}: ClientOptions = {}) {
    super(url, managerService(keyHint), {...options, auth})
  }

  /**
   * One exchange, a deployments route under the spelling this manager serves: `/api/deployments/...` first, and
   * once, when the manager answers that the route does not exist, `/deployments/...`, kept for this manager when it
   * answers there. A missing route did nothing, so asking again cannot act twice.
   */
  override async exchange(method: string, path: string, body: unknown, options?: RequestOptions): Promise<Answer> {
    if (!path.startsWith(DEPLOYMENTS)) return super.exchange(method, path, body, options)
    const bare = path.slice('/api'.length)
    if (WITHOUT_API.has(this.url)) return super.exchange(method, bare, body, options)
    const answer = await super.exchange(method, path, body, options)
    if (!isMissingRoute(answer)) return answer
    const again = await super.exchange(method, bare, body, options)
    if (isMissingRoute(again)) return answer
    WITHOUT_API.add(this.url)
    return again
  }

  /** One page of the owner's deployments. */
  async list(query: PageQuery = {}): Promise<{deployments: Deployment[]; pagination: Pagination}> {
    return this.request('GET', '/api/deployments', undefined, listAnswer, {query})
  }

  /** One deployment; another owner's is 404 (exit 7). */
  async get(id: string): Promise<Deployment> {
    return this.request('GET', `/api/deployments/${segment(id)}`, undefined, deploymentSchema)
  }

  /** Creates a deployment (DRAFT, or STARTING with `autostart`). */
  async create(body: CreateBody): Promise<Deployment> {
    return this.request('POST', '/api/deployments/create', body, deploymentSchema)
  }

  /** Duplicates a deployment (the network's `duplicate`): the new one, a DRAFT (or started with `autostart`). */
  async duplicate(id: string, body: DuplicateBody = {}): Promise<Deployment> {
    return this.request('POST', `/api/deployments/${segment(id)}/duplicate`, body, deploymentSchema)
  }

  /** Starts a deployment: `{status: "STARTING"}`. */
  async start(id: string): Promise<{status: string}> {
    return this.request('POST', `/api/deployments/${segment(id)}/start`, undefined, statusAnswer)
  }

  /** Stops a deployment: `{status: "STOPPING"}`; its jobs are stopped by the manager. */
  async stop(id: string): Promise<{status: string}> {
    return this.request('POST', `/api/deployments/${segment(id)}/stop`, undefined, statusAnswer)
  }

  /**
   * Sets the replica count (`update-replica-count`, 0 to 100: exit 2 otherwise, nothing sent): the manager lists the
   * shortfall or stops the excess; at 0 the deployment keeps running with no job.
   */
  async scale(id: string, replicas: number): Promise<{replicas: number}> {
    checkScaleReplicas(replicas)
    const path = `/api/deployments/${segment(id)}/update-replica-count`
    return this.request('PATCH', path, {replicas}, replicasAnswer)
  }

  /**
   * Moves a deployment to another market (`update-market`). gpunet's manager moves a running one make-before-break
   * and answers `move_from` while the move is under way; the network's stops its jobs and relists them there.
   */
  async move(id: string, market: string): Promise<z.infer<typeof marketAnswer>> {
    return this.request('PATCH', `/api/deployments/${segment(id)}/update-market`, {market}, marketAnswer)
  }

  /**
   * gpunet's: sets, changes or ends (`autoscale: null`) the autoscaling policy, and sets or ends (`budget: null`) the
   * budget in tokens; a member left out is left as it is. Answers the deployment.
   */
  async updateAutoscale(
    id: string,
    body: {autoscale?: Record<string, number> | null; budget?: number | null},
  ): Promise<Deployment> {
    return this.request('PATCH', `/api/deployments/${segment(id)}/update-autoscale`, body, deploymentSchema)
  }

  /** gpunet's: the deployment's autoscaling and cost now (the policy, the traffic, the spend, the vault's reach). */
  async autoscaleStatus(id: string): Promise<AutoscaleStatusAnswer> {
    return this.request('GET', `/api/deployments/${segment(id)}/autoscale`, undefined, autoscaleStatusSchema)
  }

  /** Adds a revision of the definition (`create-revision`, the definition itself as the body); answers its number. */
  async revise(id: string, definition: unknown): Promise<{active_revision: number}> {
    return this.request('POST', `/api/deployments/${segment(id)}/create-revision`, definition, revisionAnswer)
  }

  /** Deletes a STOPPED deployment (204). */
  async remove(id: string): Promise<void> {
    await this.request('DELETE', `/api/deployments/${segment(id)}`, undefined, null)
  }

  /** One page of a deployment's jobs. */
  async jobs(id: string, query: PageQuery = {}): Promise<{jobs: DeploymentJob[]; pagination: Pagination}> {
    return this.request('GET', `/api/deployments/${segment(id)}/jobs`, undefined, jobsAnswer, {query})
  }

  /** One page of a deployment's events. */
  async events(id: string, query: PageQuery = {}): Promise<{events: DeploymentEvent[]; pagination: Pagination}> {
    return this.request('GET', `/api/deployments/${segment(id)}/events`, undefined, eventsAnswer, {query})
  }

  /**
   * A header the deployment's vault signed over `message` (the network's `/:id/header`): the vault posts the
   * deployment's jobs, so only its signature opens their nodes' APIs.
   */
  async header(id: string, message: string, includeTime: boolean): Promise<string> {
    const query = {message, includeTime: String(includeTime)}
    return (await this.request('GET', `/api/deployments/${segment(id)}/header`, undefined, headerAnswer, {query}))
      .header
  }

  /**
   * The vault's withdraw transaction (base64, signed by the vault, the owner its fee payer); null when empty. `ask`
   * in SOL and tokens (the network's `{SOL, NOS}`); without it, everything the vault may give.
   */
  async withdraw(vault: string, ask?: {SOL: number; NOS: number}): Promise<string | null> {
    const path = `/api/deployments/vaults/${segment(vault)}/withdraw`
    return (await this.request('POST', path, ask ?? {}, transactionAnswer)).transaction
  }

  /** Makes an API key for the owner (wallet headers only): its key is in this answer and nowhere else. */
  async createApiKey(name?: string): Promise<z.infer<typeof newApiKey>> {
    return this.request('POST', '/api/api-keys', name === undefined ? {} : {name}, newApiKey)
  }

  /** The owner's API keys, without the keys themselves. */
  async listApiKeys(): Promise<ApiKey[]> {
    const answer = await this.request('GET', '/api/api-keys', undefined, apiKeysAnswer)
    return Array.isArray(answer) ? answer : answer.keys
  }

  /** Revokes one of the owner's API keys. */
  async revokeApiKey(id: string): Promise<void> {
    await this.request('DELETE', `/api/api-keys/${segment(id)}`, undefined, null)
  }
}

/** A deployment manager as the core's errors name it; `keyVariable` is the API key's setting, named in a 401's hint. */
function managerService(keyVariable?: string): ApiService {
  return {
    name: 'the deployment manager',
    short: 'the manager',
    code: 'manager',
    unreachableHint: 'check --manager (or GPUNET_MANAGER_URL, the manager setting) and that the manager runs',
    invalidHint: 'is the URL a deployment manager (gpunet deployment serve, or the network\u2019s)? check --manager',
    fields: (url) => ({manager: url}),
    refused: ({status, text, url}) => managerError(status, text, url, keyVariable),
  }
}

/** Exit codes of the manager's statuses (docs/deployments.md, "Exit codes"). */
const STATUS_EXITS: Record<number, ExitCodeValue> = {
  400: ExitCode.INVALID_INPUT,
  401: ExitCode.DENIED,
  402: ExitCode.INSUFFICIENT_BALANCE,
  403: ExitCode.DENIED,
  404: ExitCode.NOT_FOUND,
  // The deployment is not in a state that allows it (stop a stopped one, delete a running one): as `job stop` of an
  // ended job, a usage error.
  409: ExitCode.USAGE,
  413: ExitCode.INVALID_INPUT,
  // An Idempotency-Key sent again with another request: the caller's mistake, as a usage error.
  422: ExitCode.USAGE,
}

/**
 * The manager's refusal as a GpunetError: gpunet's `{error: {code, message, hint?}}` or the network's
 * `{error: "text"}`, with the exit code of its status; the manager's own words are cut short and kept as sent
 * (the edge strips control sequences before a terminal sees them).
 */
export function managerError(status: number, raw: string, url: string, keyVariable = 'GPUNET_API_KEY'): GpunetError {
  let code =
    status === 401 ? 'unauthorized' : status === 404 ? 'not_found' : status === 429 ? 'rate_limited' : 'manager_error'
  let message = `the deployment manager answered ${status}`
  let hint: string | undefined
  try {
    const error = (JSON.parse(raw) as {error?: unknown}).error
    if (typeof error === 'string' && error !== '') message = error
    if (typeof error === 'object' && error !== null) {
      const fields = error as {code?: unknown; message?: unknown; hint?: unknown}
      if (typeof fields.code === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(fields.code)) code = fields.code
      if (typeof fields.message === 'string' && fields.message !== '') message = fields.message
      if (typeof fields.hint === 'string' && fields.hint !== '') hint = remoteText(fields.hint)
    }
  } catch {
    // Not a JSON document (a proxy's page, a bare "Unauthorized"): the status line says it.
  }
  // A stranger's words: no control sequence reaches a terminal or a log, whatever the output.
  message = remoteText(message)
  const exitCode = STATUS_EXITS[status] ?? ExitCode.UNAVAILABLE
  hint ??=
    status === 401
      ? `the manager did not take the credentials: check the wallet (--wallet) or the API key (--api-key, ${keyVariable})`
      : status === 429
        ? `the manager at ${url} is still limiting requests after gpunet waited; try again later`
        : status >= 500
          ? `the manager at ${url} is failing (HTTP ${status}); try again later`
          : undefined
  return new GpunetError(code, message, {exitCode, hint, fields: {status, manager: url}})
}
