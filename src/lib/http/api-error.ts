/** The errors gpunet's HTTP services answer with: a status and the `{"error": {code, message, hint?}}` body. */
import {ExitCode, isGpunetError} from '../errors.js'

/** An error a service answers with: its status, body and any headers (Retry-After). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export const badRequest = (code: string, message: string, hint?: string) => new ApiError(400, code, message, hint)
export const notFound = (what: string) => new ApiError(404, 'not_found', `no ${what}`)
export const wrongState = (message: string, hint?: string) => new ApiError(409, 'wrong_state', message, hint)

/** An answer that tells the client when to try again (Retry-After, in seconds). */
export function retryLater(status: number, code: string, message: string, seconds: number): ApiError {
  return new ApiError(status, code, message, undefined, {'retry-after': String(seconds)})
}

/** The HTTP status of a GpunetError's exit code: what the CLI would exit with, as the API answers it. */
const STATUS_OF_EXIT: Record<number, number> = {
  [ExitCode.USAGE]: 400,
  [ExitCode.INVALID_INPUT]: 400,
  [ExitCode.INSUFFICIENT_BALANCE]: 402,
  [ExitCode.UNAVAILABLE]: 502,
  [ExitCode.DENIED]: 401,
  [ExitCode.NOT_FOUND]: 404,
}

/**
 * Anything thrown, as a service answers it; `mediaTypes` are the content types it takes, named in a 415. An
 * unexpected error never shows its internals.
 */
export function toApiError(error: unknown, mediaTypes: readonly string[] = ['application/json']): ApiError {
  if (error instanceof ApiError) return error
  if (isGpunetError(error)) {
    // The store's database is down: the request may succeed shortly (a manager on PostgreSQL, pg-store.ts).
    if (error.code === 'store_unavailable') return new ApiError(503, error.code, error.message, error.hint)
    const status = STATUS_OF_EXIT[error.exitCode]
    if (status) return new ApiError(status, error.code, error.message, error.hint)
  }
  const fastify = error as {code?: string; statusCode?: number}
  if (fastify.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError(413, 'body_too_large', 'the body is too large')
  if (fastify.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ApiError(415, 'unsupported_media_type', `send ${mediaTypes.join(' or ')}`)
  if (fastify.statusCode && fastify.statusCode >= 400 && fastify.statusCode < 500)
    return new ApiError(fastify.statusCode, 'bad_request', 'the request is malformed')
  return new ApiError(500, 'internal', 'internal error')
}
