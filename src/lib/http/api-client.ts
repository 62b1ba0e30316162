/**
 * The one core of gpunet's clients of network APIs (a deployment manager with its credit routes, a secrets service):
 * JSON requests through `httpFetch`, every answer a stranger's: read up to a bound of bytes, nesting and time,
 * checked with zod, credentials cut out of it, and a refused status turned into a GpunetError by the service's own
 * hook. Each client above it adds only its routes, its schemas and its words.
 */
import type {z} from 'zod'

import {type ErrorFields, ExitCode, GpunetError} from '../errors.js'
import {MAX_NESTING_DEPTH, tooDeepAt} from '../text/nesting.js'
import {stripControls} from '../text/terminal-text.js'
import {describeHttpFailure, httpFetch, readBodyAtMost, type Response} from './client.js'

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
 * headers and each gap between chunks, so a service dripping a byte at a time would hold a command for ever. These
 * services answer every route at once (a manager's work is done by its worker), and 4 MiB in a minute is 70 KB/s.
 */
export const ANSWER_TIMEOUT_MS = 60_000

/** How many times a 429 is waited out by default. */
export const RATE_LIMIT_RETRIES = 3
/** The longest Retry-After honoured by default. */
export const MAX_RETRY_AFTER_MS = 30_000

/** A message or hint a service sends is cut to this many characters before it reaches an error. */
const MAX_REMOTE_TEXT = 500

/** The most characters of one member's name an error shows: the names are the service's, of any length. */
const MAX_PATH_PART = 40

/** The methods undici's retry interceptor sends again itself (on 429 and 5xx, honouring Retry-After). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])

/** The headers that prove who asks (a wallet's signature, an API key, a token), made for each request. */
export type AuthHeaders = () => Record<string, string> | Promise<Record<string, string>>

/** A refused answer, as a service's hook reads it: the text is whole (within the bound) and redacted. */
export interface Refusal {
  status: number
  text: string
  headers: {get(name: string): string | null}
  /** The service's base URL. */
  url: string
}

/** How the errors of one kind of service read: its name in messages and codes, its hints, its refusals. */
export interface ApiService {
  /** As messages name it: "the deployment manager". */
  name: string
  /** As hints name it: "the manager". */
  short: string
  /** The stem of the transport errors' codes: `manager` gives manager_unreachable, _timeout, _answer_invalid. */
  code: string
  /** The hint of a service that cannot be reached: the setting that names it. */
  unreachableHint: string
  /** The hint of an answer that is not this service's. */
  invalidHint: string
  /** The structured fields every transport error carries (the URL under the service's name). */
  fields?: (url: string) => ErrorFields
  /** A failed status as the service's own GpunetError (code, exit code, message, hint). */
  refused(refusal: Refusal): GpunetError
}

/** How a client treats what it sends: its credentials, how 429 answers are waited out, how long an answer may take. */
export interface ApiClientOptions {
  auth?: AuthHeaders
  /** Called once when a request is answered 401, before it is sent again with new auth headers (a new login). */
  renewAuth?: () => Promise<void>
  /** Values (an API key, a token) cut out of any text the service sends back before it reaches an error. */
  secrets?: readonly string[] | (() => readonly (string | undefined)[])
  /** How many times a 429 is waited out (its Retry-After) before exit 5; undici does it for idempotent methods. */
  rateLimitRetries?: number
  /** The longest Retry-After honoured, in ms: a longer one is cut to it. */
  maxRetryAfterMs?: number
  /** Waits; tests may shorten it. */
  sleep?: (ms: number) => Promise<void>
  /** The most one answer may take, headers and body (default ANSWER_TIMEOUT_MS); exit 5 past it. */
  answerTimeoutMs?: number
}

/** One request's extras. */
export interface RequestOptions {
  /** Makes a POST safe to send again after a 429 or a lost answer. */
  idempotencyKey?: string
  /** Sent as `?a=1&b=2`, undefined members left out. */
  query?: Record<string, string | number | undefined>
  /** The most bytes of this answer (default MAX_ANSWER_BYTES). */
  maxBytes?: number
}

/** An answer of any status, read whole within its bounds. */
export interface Answer {
  status: number
  ok: boolean
  headers: Response['headers']
  text: string
}

/** The client of one service's JSON API at `url` (its origin or base path, without a trailing slash). */
export class ApiClient {
  readonly url: string

  constructor(
    url: string,
    private readonly service: ApiService,
    private readonly options: ApiClientOptions = {},
  ) {
    this.url = url.replace(/\/+$/, '')
  }

  /**
   * One request: the answer read up to a bound and checked with `schema` (null: no document), a failed status
   * turned into the service's error. A 429 is waited out (Retry-After) a bounded number of times when undici does
   * not (POST, PATCH), which is safe: a 429 was refused before anything was done, and a POST that pays carries an
   * Idempotency-Key, the same on every try, so the API answers it once.
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
    const answer = await this.exchange(method, path, body, options)
    if (!answer.ok) throw this.service.refused({...answer, url: this.url})
    if (schema === null) return
    let value: unknown
    try {
      value = JSON.parse(answer.text)
    } catch {
      throw this.malformed(`${method} ${path} answered ${answer.status} with no JSON document`)
    }
    // JSON.parse does not recurse, but zod and the --json printer do: a deep answer stops here.
    const deep = tooDeepAt(value, MAX_ANSWER_DEPTH)
    if (deep !== null) {
      throw this.malformed(
        `${method} ${path} answered a document that nests arrays and objects more than ${MAX_ANSWER_DEPTH} deep (at ${pathText(deep.slice(0, 8))}…)`,
      )
    }
    const parsed = schema.safeParse(value)
    if (!parsed.success) {
      const first = parsed.error.issues[0]
      const where = first?.path.length ? pathText(first.path) : '(document)'
      throw this.malformed(`${method} ${path} answered a document gpunet cannot read (${where}: ${first?.message})`)
    }
    return parsed.data
  }

  /**
   * One request's answer whatever its status, read whole within its bounds and redacted; 429s waited out and a
   * 401 met with one renewal of the credentials, as `request` describes.
   */
  async exchange(method: string, path: string, body: unknown, options: RequestOptions = {}): Promise<Answer> {
    const target = `${path}${search(options.query ?? {})}`
    const retries = IDEMPOTENT.has(method) ? 0 : (this.options.rateLimitRetries ?? RATE_LIMIT_RETRIES)
    const sleep = this.options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)))
    let headers = await this.headers(body, options)
    let renewable = this.options.renewAuth !== undefined
    for (let attempt = 0; ; attempt++) {
      // Each try has the whole deadline: a 429's wait is not the service's answer time.
      const deadline = AbortSignal.timeout(this.timeoutMs())
      const resendable = options.idempotencyKey !== undefined && attempt < retries
      const response = await this.send(method, target, headers, body, resendable, deadline)
      if (response === 'lost') {
        await sleep(backoffMs(attempt))
        continue
      }
      const text = this.redact(await this.read(response, deadline, options.maxBytes ?? MAX_ANSWER_BYTES))
      if (response.status === 429 && attempt < retries) {
        await sleep(retryAfterMs(response.headers.get('retry-after'), attempt, this.options.maxRetryAfterMs))
        continue
      }
      if (response.status === 401 && renewable) {
        renewable = false
        await this.options.renewAuth!()
        headers = await this.headers(body, options)
        continue
      }
      return {status: response.status, ok: response.ok, headers: response.headers, text}
    }
  }

  private async headers(body: unknown, options: RequestOptions): Promise<Record<string, string>> {
    const headers: Record<string, string> = {accept: 'application/json', ...(await this.options.auth?.())}
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey
    return headers
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
      throw this.failure(
        'unreachable',
        `cannot reach ${this.service.name} at ${this.url} (${describeHttpFailure(error)})`,
        this.service.unreachableHint,
      )
    }
  }

  /**
   * The answer's text, refused past `maxBytes` (whatever its Content-Length claims) without reading on, and past
   * the answer's deadline (exit 5 either way).
   */
  private async read(response: Response, deadline: AbortSignal, maxBytes: number): Promise<string> {
    let bytes: Uint8Array | 'too_large'
    try {
      bytes = await readBodyAtMost(response, maxBytes)
    } catch (error) {
      if (deadline.aborted) throw this.timedOut()
      throw this.failure(
        'unreachable',
        `${this.service.name} at ${this.url} broke off its answer (${describeHttpFailure(error)})`,
        `try again; if it persists, ${this.service.short} is failing`,
      )
    }
    if (bytes === 'too_large') throw this.malformed(`an answer of more than the ${maxBytes} bytes gpunet reads`)
    return Buffer.from(bytes).toString('utf8')
  }

  private timeoutMs(): number {
    return this.options.answerTimeoutMs ?? ANSWER_TIMEOUT_MS
  }

  /** The error of an answer that did not arrive whole within the deadline. */
  private timedOut(): GpunetError {
    const ms = this.timeoutMs()
    const within = ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
    return this.failure(
      'timeout',
      `${this.service.name} at ${this.url} sent no whole answer within ${within}`,
      `nothing more is read from it; try again, and if it persists ${this.service.short} is failing`,
    )
  }

  private malformed(why: string): GpunetError {
    return this.failure('answer_invalid', `${this.service.name} at ${this.url} sent ${why}`, this.service.invalidHint)
  }

  private failure(kind: string, message: string, hint: string): GpunetError {
    return new GpunetError(`${this.service.code}_${kind}`, message, {
      exitCode: ExitCode.UNAVAILABLE,
      hint,
      fields: this.service.fields?.(this.url),
    })
  }

  /** The text with every credential this client sends cut out: a service that echoes a key must not print it. */
  private redact(text: string): string {
    const {secrets = []} = this.options
    let out = text
    for (const secret of typeof secrets === 'function' ? secrets() : secrets)
      if (secret !== undefined && secret.length >= 8) out = out.split(secret).join('[redacted]')
    return out
  }
}

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
export function segment(value: string): string {
  return encodeURIComponent(value)
}

/** `?a=1&b=2` of the defined members, or nothing. */
function search(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value))
  const text = params.toString()
  return text ? `?${text}` : ''
}

/** A service's words as an error may carry them: no control sequence reaches a terminal or a log, and cut short. */
export function remoteText(text: string): string {
  return stripControls(text).slice(0, MAX_REMOTE_TEXT)
}

/** A path into an answer as an error shows it: each name cut short, so the service cannot make the error long. */
function pathText(path: readonly PropertyKey[]): string {
  return path
    .map((part) => {
      const text = String(part)
      return text.length > MAX_PATH_PART ? `${text.slice(0, MAX_PATH_PART)}…` : text
    })
    .join('.')
}
