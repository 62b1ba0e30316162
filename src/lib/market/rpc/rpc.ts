/**
 * The Solana JSON-RPC connection: web3.js's Connection speaking through `httpText` (one HTTP client), with our own
 * handling of rate limits: a public node's 429 is retried with backoff (Retry-After honoured), then exit 5 with a
 * hint to use another node. Any other failure of the node is exit 5 naming its URL.
 */
import {Connection} from '@solana/web3.js'

import type {GpunetError} from '../../errors.js'
import {rpcFailureAt, rpcPost} from './json-rpc.js'

/** Opens a connection to a JSON-RPC node at `url` ("confirmed" commitment). */
export function openConnection(url: string): Connection {
  return new Connection(url, {
    commitment: 'confirmed',
    fetch: rpcPost as unknown as typeof fetch,
    disableRetryOnRateLimit: true,
    httpAgent: false,
  })
}

/** The GpunetError for a failed call to the node behind `connection` (exit 5, or the error itself if already ours). */
export function rpcFailure(connection: Connection, error: unknown): GpunetError {
  return rpcFailureAt(connection.rpcEndpoint, error)
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
