/** The API's errors: an HTTP status and the `{"error": {code, message, hint?}}` body. */
import {ExitCode, isGpunetError} from '../errors.js'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export const badRequest = (code: string, message: string, hint?: string) => new ApiError(400, code, message, hint)
export const notFound = (what: string) => new ApiError(404, 'not_found', `no ${what}`)
export const wrongState = (message: string, hint?: string) => new ApiError(409, 'wrong_state', message, hint)

/** The HTTP status of a GpunetError's exit code: what the CLI would exit with, as the API answers it. */
const STATUS_OF_EXIT: Record<number, number> = {
  [ExitCode.USAGE]: 400,
  [ExitCode.INVALID_INPUT]: 400,
  [ExitCode.INSUFFICIENT_BALANCE]: 402,
  [ExitCode.UNAVAILABLE]: 502,
  [ExitCode.DENIED]: 401,
  [ExitCode.NOT_FOUND]: 404,
}

/** Anything thrown, as the API answers it; an unexpected error never shows its internals. */
export function toApiError(error: unknown): ApiError {
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
    return new ApiError(415, 'unsupported_media_type', 'send application/json')
  if (fastify.statusCode && fastify.statusCode >= 400 && fastify.statusCode < 500)
    return new ApiError(fastify.statusCode, 'bad_request', 'the request is malformed')
  return new ApiError(500, 'internal', 'internal error')
}
