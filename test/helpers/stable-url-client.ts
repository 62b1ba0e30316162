/**
 * A client that loops on a deployment's stable URL (through the localnet's gateway, with the stable URL's Host
 * header) for as long as a test or a benchmark runs: one request at a time, counting each answer that is not the
 * service's 200 as a failure, with each request's latency.
 */
import {request} from 'node:http'
import {setTimeout as sleep} from 'node:timers/promises'

export interface StableUrlClient {
  ok: number
  /** What each failed request got, with when (ms since the loop began). */
  failures: string[]
  /** The latency of each request, ms. */
  latencies: number[]
  /** Stops the loop once the request under way is answered. */
  stop(): Promise<void>
}

/** Answers the status and body of one GET of `host` through the gateway on 127.0.0.1:`port`. */
export function getThrough(port: number, host: string, timeoutMs = 5000): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = request(
      {host: '127.0.0.1', port, path: '/', method: 'GET', headers: {host: `${host}:${port}`}},
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
        res.on('error', reject)
      },
    )
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end()
  })
}

/** Loops GET requests on the stable URL, `pauseMs` apart, until stopped; `expected` is the service's body. */
export function loopOnStableUrl(port: number, host: string, expected: string, pauseMs = 20): StableUrlClient {
  const client = {ok: 0, failures: [] as string[], latencies: [] as number[]} as StableUrlClient
  const began = Date.now()
  let running = true
  const loop = (async () => {
    while (running) {
      const sent = performance.now()
      try {
        const {status, body} = await getThrough(port, host)
        client.latencies.push(performance.now() - sent)
        if (status === 200 && body.trim() === expected) client.ok++
        else client.failures.push(`${Date.now() - began} ms: ${status} ${body.slice(0, 120)}`)
      } catch (error) {
        client.latencies.push(performance.now() - sent)
        client.failures.push(`${Date.now() - began} ms: ${(error as Error).message}`)
      }
      await sleep(pauseMs)
    }
  })()
  client.stop = async () => {
    running = false
    await loop
  }
  return client
}

/** The p-th percentile (0..100) of the values, ms. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
