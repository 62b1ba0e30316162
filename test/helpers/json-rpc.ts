/** A raw JSON-RPC call, for tests that assert exact answers and error shapes. */
/** A raw JSON-RPC call, to assert exact answers and error shapes. */
export async function rpc(
  url: string,
  method: string,
  params: unknown[] = [],
): Promise<{result?: unknown; error?: {code: number; message: string; data?: {err: unknown; logs: string[]}}}> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({jsonrpc: '2.0', id: 1, method, params}),
  })
  return (await res.json()) as never
}
