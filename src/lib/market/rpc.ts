/**
 * The Solana JSON-RPC connection: web3.js's Connection speaking through `httpText` (one HTTP client), with our own
 * handling of rate limits: a public node's 429 is retried with backoff (Retry-After honoured), then exit 5 with a
 * hint to use another node. Any other failure of the node is exit 5 naming its URL.
 */
import {Connection} from '@solana/web3.js'

import {ExitCode, GpunetError, isGpunetError} from '../errors.js'
import {httpText} from '../http.js'

/** Retries of a rate-limited request, and the first wait (doubled each time) when the node gives no Retry-After. */
const RATE_LIMIT_RETRIES = 4
const RATE_LIMIT_FIRST_WAIT_MS = 500
/** The longest Retry-After honoured; a node asking for more is treated as refusing. */
const RATE_LIMIT_MAX_WAIT_MS = 10_000

/** Marks the error web3.js builds from our last 429, so it can be told apart from other failures. */
const RATE_LIMITED = 'rate limited (HTTP 429)'

/** Opens a connection to a JSON-RPC node at `url` ("confirmed" commitment). */
export function openConnection(url: string): Connection {
  return new Connection(url, {
    commitment: 'confirmed',
    fetch: rpcFetch as unknown as typeof fetch,
    disableRetryOnRateLimit: true,
    httpAgent: false,
  })
}

/** web3.js's fetch: a JSON-RPC POST through httpText, retried while the node answers 429. */
async function rpcFetch(url: string, init: {body?: string; headers?: Record<string, string>}) {
  let wait = RATE_LIMIT_FIRST_WAIT_MS
  for (let attempt = 0; ; attempt++) {
    const res = await httpText(url, {method: 'POST', body: init.body, headers: init.headers})
    if (res.status !== 429) return res
    const retryAfter = retryAfterMs(res.headers.get('retry-after'))
    if (attempt >= RATE_LIMIT_RETRIES || (retryAfter ?? 0) > RATE_LIMIT_MAX_WAIT_MS) {
      throw new Error(RATE_LIMITED)
    }
    await new Promise((resolve) => setTimeout(resolve, retryAfter ?? wait))
    wait *= 2
  }
}

function retryAfterMs(header: string | null): number | null {
  if (header === null) return null
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now())
}

/** The GpunetError for a failed call to the node behind `connection` (exit 5, or the error itself if already ours). */
export function rpcFailure(connection: Connection, error: unknown): GpunetError {
  if (isGpunetError(error)) return error
  const message = (error as Error).message ?? String(error)
  if (message.includes(RATE_LIMITED) || /\b429\b/.test(message)) {
    return new GpunetError(
      'rpc_rate_limited',
      `the Solana RPC node ${connection.rpcEndpoint} keeps refusing requests (too many requests)`,
      {
        exitCode: ExitCode.UNAVAILABLE,
        cause: error,
        hint: 'public RPC nodes limit requests hard: use your own with --rpc URL or GPUNET_RPC_URL',
        fields: {rpcUrl: connection.rpcEndpoint},
      },
    )
  }
  return new GpunetError('rpc_failed', `the Solana RPC node ${connection.rpcEndpoint} failed: ${message}`, {
    exitCode: ExitCode.UNAVAILABLE,
    cause: error,
    hint: 'check --rpc, GPUNET_RPC_URL or the network',
    fields: {rpcUrl: connection.rpcEndpoint},
  })
}

/** Runs calls to the node; any failure becomes exit 5 naming its URL (rpcFailure). */
export async function rpcCall<T>(connection: Connection, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw rpcFailure(connection, error)
  }
}

/**
 * A call started now and awaited later, after others: until then its failure is held for that `await` instead of
 * being reported as an unhandled rejection, so calls can run side by side and still fail in a fixed order.
 */
export function inFlight<T>(call: Promise<T>): Promise<T> {
  call.catch(() => {})
  return call
}
