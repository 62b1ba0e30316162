/**
 * The client of a deployment manager's HTTP API: the network's own routes, bodies and objects under
 * `/api/deployments` (@nosana/api), plus gpunet's API keys. Every answer is a stranger's: read up to a bound,
 * checked with zod, objects kept with all their members (the network's snake_case names) for `--json`.
 */
import {z} from 'zod'

import {ExitCode, type ExitCodeValue, GpunetError} from '../errors.js'
import {describeHttpFailure, httpFetch, readBodyAtMost, type Response} from '../http/client.js'
import {MAX_NESTING_DEPTH, tooDeepAt} from '../text/nesting.js'
import {stripControls} from '../text/terminal-text.js'

/** The most bytes one answer may have: a page of 100 deployments or events is far less. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024

/**
 * The deepest an answer may nest: a job definition may nest MAX_NESTING_DEPTH deep, and a page holds one a few
 * levels down (`{jobs: [{jobDefinition}]}`, `{revisions: [{job_definition}]}`); past this nothing walks it (zod,
 * the `--json` printer), so no answer can overflow the stack.
 */
export const MAX_ANSWER_DEPTH = MAX_NESTING_DEPTH + 8

/**
 * How long one answer may take, from sending the request to its last byte: the agent's timeouts bound only the
 * headers and each gap between chunks, so a manager dripping a byte at a time would hold a command for ever. A
 * manager answers every route at once (its work is done by its worker), and 4 MiB in a minute is 70 KB/s.
 */
export const MANAGER_ANSWER_TIMEOUT_MS = 60_000

/** A message or hint the manager sends is cut to this many characters before it reaches an error. */
const MAX_REMOTE_TEXT = 500

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
const revisionAnswer = z.looseObject({active_revision: z.number().int(), updated_at: time.optional()})
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
}

/** The filters of a page of a list. */
export interface PageQuery {
  cursor?: string
  limit?: 10 | 20 | 50 | 100
  sort_order?: 'asc' | 'desc'
  [filter: string]: string | number | undefined
}

/** The headers that prove who asks: the wallet's (x-user-id, authorization) or an API key's. */
export type AuthHeaders = () => Record<string, string>

/** How a client treats what it sends: the credentials it must never echo, and how 429 answers are waited out. */
export interface ClientOptions {
  /** Values (an API key) cut out of any text the manager sends back before it reaches an error. */
  secrets?: string[]
  /** The setting's variable named in a 401's hint. */
  keyHint?: string
  /** How many times a 429 is waited out (its Retry-After) before exit 5; undici does it for idempotent methods. */
  rateLimitRetries?: number
  /** The longest Retry-After honoured, in ms: a longer one is cut to it. */
  maxRetryAfterMs?: number
  /** Waits; tests may shorten it. */
  sleep?: (ms: number) => Promise<void>
  /** The most one answer may take, headers and body (default MANAGER_ANSWER_TIMEOUT_MS); exit 5 past it. */
  answerTimeoutMs?: number
}

/** One request's extras: an Idempotency-Key makes a POST safe to send again after a 429 or a lost answer. */
export interface RequestOptions {
  idempotencyKey?: string
}

/** How many times a 429 is waited out by default. */
export const RATE_LIMIT_RETRIES = 3
/** The longest Retry-After honoured by default. */
export const MAX_RETRY_AFTER_MS = 30_000

/** A manager's deployment API at `url` (its origin; routes are under `/api`), authenticated by `auth`. */
export class DeploymentClient {
  readonly url: string

  constructor(
    url: string,
    private readonly auth: AuthHeaders,
    private readonly options: ClientOptions = {},
  ) {
    this.url = url.replace(/\/+$/, '')
  }

  /** One page of the owner's deployments. */
  async list(query: PageQuery = {}): Promise<{deployments: Deployment[]; pagination: Pagination}> {
    return this.call('GET', `/api/deployments${search(query)}`, undefined, listAnswer)
  }

  /** One deployment; another owner's is 404 (exit 7). */
  async get(id: string): Promise<Deployment> {
    return this.call('GET', `/api/deployments/${segment(id)}`, undefined, deploymentSchema)
  }

  /** Creates a deployment (DRAFT, or STARTING with `autostart`). */
  async create(body: CreateBody): Promise<Deployment> {
    return this.call('POST', '/api/deployments/create', body, deploymentSchema)
  }

  /** Starts a deployment: `{status: "STARTING"}`. */
  async start(id: string): Promise<{status: string}> {
    return this.call('POST', `/api/deployments/${segment(id)}/start`, undefined, statusAnswer)
  }

  /** Stops a deployment: `{status: "STOPPING"}`; its jobs are stopped by the manager. */
  async stop(id: string): Promise<{status: string}> {
    return this.call('POST', `/api/deployments/${segment(id)}/stop`, undefined, statusAnswer)
  }

  /** Sets the replica count (`update-replica-count`): the manager lists the shortfall or stops the excess. */
  async scale(id: string, replicas: number): Promise<{replicas: number}> {
    const path = `/api/deployments/${segment(id)}/update-replica-count`
    return this.call('PATCH', path, {replicas}, replicasAnswer)
  }

  /** Adds a revision of the definition (`create-revision`, the definition itself as the body); answers its number. */
  async revise(id: string, definition: unknown): Promise<{active_revision: number}> {
    return this.call('POST', `/api/deployments/${segment(id)}/create-revision`, definition, revisionAnswer)
  }

  /** Deletes a STOPPED deployment (204). */
  async remove(id: string): Promise<void> {
    await this.call('DELETE', `/api/deployments/${segment(id)}`, undefined, null)
  }

  /** One page of a deployment's jobs. */
  async jobs(id: string, query: PageQuery = {}): Promise<{jobs: DeploymentJob[]; pagination: Pagination}> {
    return this.call('GET', `/api/deployments/${segment(id)}/jobs${search(query)}`, undefined, jobsAnswer)
  }

  /** One page of a deployment's events. */
  async events(id: string, query: PageQuery = {}): Promise<{events: DeploymentEvent[]; pagination: Pagination}> {
    return this.call('GET', `/api/deployments/${segment(id)}/events${search(query)}`, undefined, eventsAnswer)
  }

  /**
   * A header the deployment's vault signed over `message` (the network's `/:id/header`): the vault posts the
   * deployment's jobs, so only its signature opens their nodes' APIs.
   */
  async header(id: string, message: string, includeTime: boolean): Promise<string> {
    const query = search({message, includeTime: String(includeTime)})
    return (await this.call('GET', `/api/deployments/${segment(id)}/header${query}`, undefined, headerAnswer)).header
  }

  /** The vault's withdraw transaction (base64, signed by the vault, the owner its fee payer); null when empty. */
  async withdraw(vault: string): Promise<string | null> {
    const path = `/api/deployments/vaults/${segment(vault)}/withdraw`
    return (await this.call('POST', path, {}, transactionAnswer)).transaction
  }

  /** Makes an API key for the owner (wallet headers only): its key is in this answer and nowhere else. */
  async createApiKey(name?: string): Promise<z.infer<typeof newApiKey>> {
    return this.call('POST', '/api/api-keys', name === undefined ? {} : {name}, newApiKey)
  }

  /** The owner's API keys, without the keys themselves. */
  async listApiKeys(): Promise<ApiKey[]> {
    const answer = await this.call('GET', '/api/api-keys', undefined, apiKeysAnswer)
    return Array.isArray(answer) ? answer : answer.keys
  }

  /** Revokes one of the owner's API keys. */
  async revokeApiKey(id: string): Promise<void> {
    await this.call('DELETE', `/api/api-keys/${segment(id)}`, undefined, null)
  }

  /**
   * One request of the manager's API (the deployment routes above, the credit routes of credits/): the answer read
   * up to a bound and checked with `schema` (null: no document). A 429 is waited out (Retry-After) a bounded number
   * of times when undici does not (POST, PATCH), which is safe: a 429 was refused before anything was done, and a
   * POST that pays carries an Idempotency-Key, the same on every try, so the API answers it once.
   */
  async request<T>(
    method: string,
    path: string,
    body: unknown,
    schema: z.ZodType<T>,
    options?: RequestOptions,
  ): Promise<T>
  async request(method: string, path: string, body: unknown, schema: null, options?: RequestOptions): Promise<void>
  async request<T>(
    method: string,
    path: string,
    body: unknown,
    schema: z.ZodType<T> | null,
    options: RequestOptions = {},
  ): Promise<T | void> {
    const headers: Record<string, string> = {accept: 'application/json', ...this.auth()}
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey
    const retries = IDEMPOTENT.has(method) ? 0 : (this.options.rateLimitRetries ?? RATE_LIMIT_RETRIES)
    const sleep = this.options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)))
    const timeoutMs = this.options.answerTimeoutMs ?? MANAGER_ANSWER_TIMEOUT_MS
    for (let attempt = 0; ; attempt++) {
      // Each try has the whole deadline: a 429's wait is not the manager's answer time.
      const deadline = AbortSignal.timeout(timeoutMs)
      const response = await this.send(
        method,
        path,
        headers,
        body,
        options.idempotencyKey !== undefined && attempt < retries,
        deadline,
      )
      if (response === 'lost') {
        await sleep(backoffMs(attempt))
        continue
      }
      const raw = this.redact(await this.read(response, deadline))
      if (response.status === 429 && attempt < retries) {
        await sleep(retryAfterMs(response.headers.get('retry-after'), attempt, this.options.maxRetryAfterMs))
        continue
      }
      if (!response.ok) throw managerError(response.status, raw, this.url, this.options.keyHint)
      if (schema === null) return
      let value: unknown
      try {
        value = JSON.parse(raw)
      } catch {
        throw malformed(this.url, `${method} ${path.split('?')[0]} answered ${response.status} with no JSON document`)
      }
      // JSON.parse does not recurse, but zod and the --json printer do: a deep answer stops here.
      const deep = tooDeepAt(value, MAX_ANSWER_DEPTH)
      if (deep !== null) {
        throw malformed(
          this.url,
          `${method} ${path.split('?')[0]} answered a document that nests arrays and objects more than ${MAX_ANSWER_DEPTH} deep (at ${pathText(deep.slice(0, 8))}…)`,
        )
      }
      const parsed = schema.safeParse(value)
      if (!parsed.success) {
        const first = parsed.error.issues[0]
        const where = first?.path.length ? pathText(first.path) : '(document)'
        throw malformed(
          this.url,
          `${method} ${path.split('?')[0]} answered a document gpunet cannot read (${where}: ${first?.message})`,
        )
      }
      return parsed.data
    }
  }

  /**
   * Sends once. A request that never got an answer is 'lost' when `resendable` (it carries an Idempotency-Key and
   * has tries left): sending it again cannot act twice.
   */
  private async send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: unknown,
    resendable: boolean,
    deadline: AbortSignal,
  ): Promise<Response | 'lost'> {
    try {
      return await httpFetch(`${this.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: deadline,
      })
    } catch (error) {
      if (deadline.aborted) throw this.timedOut()
      if (resendable) return 'lost'
      throw new GpunetError(
        'manager_unreachable',
        `cannot reach the deployment manager at ${this.url} (${describeHttpFailure(error)})`,
        {
          exitCode: ExitCode.UNAVAILABLE,
          hint: 'check --manager (or GPUNET_MANAGER_URL, the manager setting) and that the manager runs',
          fields: {manager: this.url},
        },
      )
    }
  }

  /**
   * The answer's text, refused past MAX_ANSWER_BYTES (whatever its Content-Length claims) without reading on, and
   * past the answer's deadline (exit 5 either way).
   */
  private async read(response: Response, deadline: AbortSignal): Promise<string> {
    let bytes: Uint8Array | 'too_large'
    try {
      bytes = await readBodyAtMost(response, MAX_ANSWER_BYTES)
    } catch (error) {
      if (deadline.aborted) throw this.timedOut()
      throw new GpunetError(
        'manager_unreachable',
        `the deployment manager at ${this.url} broke off its answer (${describeHttpFailure(error)})`,
        {
          exitCode: ExitCode.UNAVAILABLE,
          hint: 'try again; if it persists, the manager is failing',
          fields: {manager: this.url},
        },
      )
    }
    if (bytes === 'too_large')
      throw malformed(this.url, `an answer of more than the ${MAX_ANSWER_BYTES} bytes gpunet reads`)
    return Buffer.from(bytes).toString('utf8')
  }

  /** The error of an answer that did not arrive whole within the deadline. */
  private timedOut(): GpunetError {
    const ms = this.options.answerTimeoutMs ?? MANAGER_ANSWER_TIMEOUT_MS
    const within = ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
    return new GpunetError(
      'manager_timeout',
      `the deployment manager at ${this.url} sent no whole answer within ${within}`,
      {
        exitCode: ExitCode.UNAVAILABLE,
        hint: 'nothing more is read from it; try again, and if it persists the manager is failing',
        fields: {manager: this.url},
      },
    )
  }

  /** The text with every credential this client sends cut out: a manager that echoes a key must not print it. */
  private redact(text: string): string {
    let out = text
    for (const secret of this.options.secrets ?? []) if (secret.length >= 8) out = out.split(secret).join('[redacted]')
    return out
  }

  private async call<T>(method: string, path: string, body: unknown, schema: z.ZodType<T>): Promise<T>
  private async call(method: string, path: string, body: unknown, schema: null): Promise<void>
  private async call<T>(method: string, path: string, body: unknown, schema: z.ZodType<T> | null): Promise<T | void> {
    return schema === null ? this.request(method, path, body, null) : this.request(method, path, body, schema)
  }
}

/** The methods undici's retry interceptor sends again itself (on 429 and 5xx, honouring Retry-After). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])

/** The wait a 429 asks for: Retry-After in seconds or as a date, else a doubling backoff; never past `max`. */
export function retryAfterMs(header: string | null, attempt: number, max = MAX_RETRY_AFTER_MS): number {
  let ms = backoffMs(attempt)
  if (header !== null && /^\d{1,9}$/.test(header.trim())) ms = Number(header.trim()) * 1000
  else if (header !== null) {
    const at = Date.parse(header)
    if (Number.isFinite(at)) ms = Math.max(0, at - Date.now())
  }
  return Math.min(ms, max)
}

function backoffMs(attempt: number): number {
  return Math.min(250 * 2 ** attempt, 8000)
}

/** A path segment as sent: an id from the command line must not add path parts or a query. */
function segment(value: string): string {
  return encodeURIComponent(value)
}

/** `?a=1&b=2` of the defined members, or nothing. */
function search(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value))
  const text = params.toString()
  return text ? `?${text}` : ''
}

/** The most characters of one member's name an error shows: the names are the manager's, of any length. */
const MAX_PATH_PART = 40

/** A path into an answer as an error shows it: each name cut short, so the manager cannot make the error long. */
function pathText(path: readonly PropertyKey[]): string {
  return path
    .map((part) => {
      const text = String(part)
      return text.length > MAX_PATH_PART ? `${text.slice(0, MAX_PATH_PART)}…` : text
    })
    .join('.')
}

function malformed(url: string, why: string): GpunetError {
  return new GpunetError('manager_answer_invalid', `the deployment manager at ${url} sent ${why}`, {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'is the URL a deployment manager (gpunet deployment serve, or the network\u2019s)? check --manager',
    fields: {manager: url},
  })
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
      if (typeof fields.hint === 'string' && fields.hint !== '')
        hint = stripControls(fields.hint).slice(0, MAX_REMOTE_TEXT)
    }
  } catch {
    // Not a JSON document (a proxy's page, a bare "Unauthorized"): the status line says it.
  }
  // A stranger's words: no control sequence reaches a terminal or a log, whatever the output.
  message = stripControls(message).slice(0, MAX_REMOTE_TEXT)
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
