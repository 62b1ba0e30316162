/**
 * Solana JSON-RPC over `httpText` without web3.js: the rate-limit rule every call to a node follows (a 429 is
 * retried with backoff, Retry-After honoured), the error a failed call becomes, and one plain call for the few
 * reads that must not load web3.js (a command served before oclif loads: src/cli/fast-start.ts).
 */
import {ExitCode, GpunetError, isGpunetError} from '../../errors.js'
import {httpText, type TextResponse} from '../../http/client.js'

/** Retries of a rate-limited request, and the first wait (doubled each time) when the node gives no Retry-After. */
const RATE_LIMIT_RETRIES = 4
const RATE_LIMIT_FIRST_WAIT_MS = 500
/** The longest Retry-After honoured; a node asking for more is treated as refusing. */
const RATE_LIMIT_MAX_WAIT_MS = 10_000

/** Marks the error thrown after our last 429, so it can be told apart from other failures. */
export const RATE_LIMITED = 'rate limited (HTTP 429)'

/** A JSON-RPC POST through httpText, retried while the node answers 429 (web3.js's fetch, and jsonRpc's). */
export async function rpcPost(
  url: string,
  init: {body?: string; headers?: Record<string, string>},
): Promise<TextResponse> {
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

/** The GpunetError for a failed call to the JSON-RPC node at `rpcUrl` (exit 5, or the error itself if already ours). */
export function rpcFailureAt(rpcUrl: string, error: unknown): GpunetError {
  if (isGpunetError(error)) return error
  const message = (error as Error).message ?? String(error)
  if (message.includes(RATE_LIMITED) || /\b429\b/.test(message)) {
    return new GpunetError(
      'rpc_rate_limited',
      `the Solana RPC node ${rpcUrl} keeps refusing requests (too many requests)`,
      {
        exitCode: ExitCode.UNAVAILABLE,
        cause: error,
        hint: 'public RPC nodes limit requests hard: use your own with --rpc URL or GPUNET_RPC_URL',
        fields: {rpcUrl},
      },
    )
  }
  return new GpunetError('rpc_failed', `the Solana RPC node ${rpcUrl} failed: ${message}`, {
    exitCode: ExitCode.UNAVAILABLE,
    cause: error,
    hint: 'check --rpc, GPUNET_RPC_URL or the network',
    fields: {rpcUrl},
  })
}

/**
 * One JSON-RPC call: its `result`, whose shape the caller checks (a node's answer is untrusted). Any failure (the
 * node unreachable, an HTTP error, an error answer, a body that is no JSON-RPC answer) is exit 5 naming the node.
 */
export async function jsonRpc(rpcUrl: string, method: string, params: unknown[]): Promise<unknown> {
  try {
    const res = await rpcPost(rpcUrl, {
      body: JSON.stringify({jsonrpc: '2.0', id: 1, method, params}),
      headers: {'content-type': 'application/json'},
    })
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`.trim())
    let answer: {result?: unknown; error?: {code?: unknown; message?: unknown}} | null
    try {
      answer = JSON.parse(await res.text()) as typeof answer
    } catch {
      throw new Error(`${method} answered a body that is not JSON`)
    }
    if (answer?.error) throw new Error(`${method}: ${String(answer.error.message)} (${String(answer.error.code)})`)
    if (!answer || !('result' in answer)) throw new Error(`${method} answered no result`)
    return answer.result
  } catch (error) {
    throw rpcFailureAt(rpcUrl, error)
  }
}
