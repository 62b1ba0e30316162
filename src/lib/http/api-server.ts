/**
 * The one base of gpunet's HTTP services (the secrets service, the deployment manager's API and the credit routes
 * beside it): a fastify server that answers every failure, its own and the routes', as `{"error": {code, message,
 * hint?}}`, and refuses web pages while it listens on loopback. Each service registers its routes on it as plugins.
 */
import type {AddressInfo} from 'node:net'

import Fastify, {type FastifyInstance, type FastifyReply} from 'fastify'

import {ApiError, badRequest, toApiError} from './api-error.js'
import {isLoopbackAddress, webPageRefusal} from './loopback-guard.js'

/** Reads a body of one content type into the request's `body`; throws an ApiError for one it refuses. */
export type BodyParser = (body: Buffer) => unknown

export interface ApiServerOptions {
  /** Largest request body, in bytes (413 above); a route may set a smaller one. */
  bodyLimit: number
  /** Take the client IP from X-Forwarded-For (only behind a proxy you run). */
  trustProxy?: boolean
  /** Browser origins allowed besides the service's own while it listens on loopback (the allowOrigin setting). */
  allowedOrigins?: readonly string[]
  /** How an application/json body is read; by default as UTF-8 text that Node decodes, an empty one as no body. */
  json?: BodyParser
  /** Content types taken besides JSON, by type, with their parsers (the secrets service's forms). */
  parsers?: Record<string, BodyParser>
  /** The answers of the service's own errors, tried before the shared ones (toApiError); undefined for the rest. */
  errors?: (error: unknown) => ApiError | undefined
  /** Told of every 5xx answer, with what was thrown. */
  onServerError?: (error: unknown, answer: ApiError) => void
}

/** A service's server: not listening until `listen`. */
export interface ApiServer {
  /** Where the service registers its routes (plugins) and hooks. */
  readonly app: FastifyInstance
  /** The base URL once listening, e.g. http://127.0.0.1:8787. */
  readonly url: string
  listen(port?: number, host?: string): Promise<string>
  close(): Promise<void>
}

/** Builds a service's server with the body parsers, error answers and loopback guard every service shares. */
export function createApiServer(options: ApiServerOptions): ApiServer {
  const app = Fastify({
    bodyLimit: options.bodyLimit,
    logger: false,
    trustProxy: options.trustProxy ?? false,
    // A URL with a broken percent-escape is refused before any route: in the services' error shape, not Fastify's.
    frameworkErrors: (_error, request, reply) => {
      void (reply as FastifyReply)
        .code(400)
        .send({error: {code: 'invalid_url', message: `not a valid URL: ${request.url.slice(0, 200)}`}})
    },
  })
  // JSON, and only what a service names besides: a form is what any web page can post without asking first.
  const parsers: Record<string, BodyParser> = {'application/json': options.json ?? parseJson, ...options.parsers}
  const mediaTypes = Object.keys(parsers)
  app.removeAllContentTypeParsers()
  for (const [type, parse] of Object.entries(parsers)) {
    app.addContentTypeParser(type, {parseAs: 'buffer'}, (_request, body, done) => {
      try {
        done(null, parse(body as Buffer))
      } catch (error) {
        done(error as Error, undefined)
      }
    })
  }

  // Bound to loopback, the service is reachable from any web page the user opens: refuse those (loopback-guard.ts).
  // On until the bound address shows the service listens beyond loopback.
  let loopback = true
  app.addHook('onRequest', (request, _reply, done) => {
    const refusal = loopback ? webPageRefusal(request.raw, {allowedOrigins: options.allowedOrigins}) : null
    done(refusal ? new ApiError(refusal.status, 'refused', refusal.message) : undefined)
  })

  app.setErrorHandler((error, _request, reply) => {
    const failure = options.errors?.(error) ?? toApiError(error, mediaTypes)
    if (failure.status >= 500) options.onServerError?.(error, failure)
    return reply
      .code(failure.status)
      .headers(failure.headers)
      .send({error: {code: failure.code, message: failure.message, ...(failure.hint ? {hint: failure.hint} : {})}})
  })

  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send({error: {code: 'no_route', message: `no route ${request.method} ${request.url.split('?')[0]}`}})
  })

  let url = ''
  return {
    app,
    get url() {
      return url
    },
    async listen(port = 0, host = '127.0.0.1') {
      url = await app.listen({port, host})
      // Decided from the address the socket is bound to, not the text asked for: `0:0:0:0:0:0:0:1` and
      // `::ffff:127.0.0.1` are loopback too.
      loopback = isLoopbackAddress((app.server.address() as AddressInfo).address)
      return url
    },
    close: () => app.close(),
  }
}

/** The default JSON body: text as Node decodes it, an empty one as no body. */
function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined
  try {
    return JSON.parse(body.toString('utf8')) as unknown
  } catch {
    throw badRequest('malformed_body', 'the body is not valid JSON')
  }
}
