/**
 * The localnet node API's `GET /job/<job>/stats` and `/job/<job>/stats/stream` (node.openapi.json, TaskStat): per
 * running operation, CPU (100 = one core, over the time between two samples), memory, storage and network bytes.
 * Where the network's nodes always send numbers, a figure gpunet cannot tell for the job alone is null.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'
import {setTimeout as sleep} from 'node:timers/promises'

import type {TaskStat} from '../../node-api/stats-protocol.js'
import type {ResourceSample} from '../runtime/stats.js'
import type {OperationAccess} from './access.js'

/** Time between the two samples a one-off answer takes its CPU rate over. */
export const ONE_OFF_GAP_MS = 500
/** Seconds between stream frames unless `interval` says otherwise, and the most it may say. */
export const DEFAULT_INTERVAL_S = 2
export const MAX_INTERVAL_S = 3600

/** The figures of one operation from two samples of it (`before` null: no CPU rate yet). */
export function taskStat(opId: string, before: ResourceSample | null, now: ResourceSample): TaskStat {
  const elapsedNs = before ? (now.at - before.at) * 1e6 : 0
  const cpuNs = before?.cpuNanos != null && now.cpuNanos !== null ? now.cpuNanos - before.cpuNanos : null
  const cpu = cpuNs !== null && elapsedNs > 0 ? round((Math.max(0, cpuNs) / elapsedNs) * 100) : null
  const {memoryUsage: usage, memoryLimit: limit} = now
  return {
    opId,
    timestamp: now.at,
    cpu: {cpu_percent: cpu},
    memory: {
      memory_usage: usage,
      memory_limit: limit,
      memory_percent: usage !== null && limit ? round((usage / limit) * 100) : null,
    },
    disk: {read: now.diskRead, write: now.diskWrite},
    network: {received: now.netReceived, sent: now.netSent},
  }
}

/** Samples every operation; the previous samples (by op id) give the CPU rates. */
export async function sampleAll(
  ops: ReadonlyMap<string, OperationAccess>,
  previous: Map<string, ResourceSample>,
): Promise<TaskStat[]> {
  const stats: TaskStat[] = []
  await Promise.all(
    [...ops].map(async ([id, op]) => {
      const sample = await op.sample()
      if (!sample) return
      stats.push(taskStat(id, previous.get(id) ?? null, sample))
      previous.set(id, sample)
    }),
  )
  return stats.sort((a, b) => a.opId.localeCompare(b.opId))
}

/** Reads `interval` (whole seconds), `start` and `end` (unix ms); the reason when one is malformed. */
export function statsQuery(url: URL): {intervalS: number} | {reason: string} {
  for (const name of ['start', 'end']) {
    const value = url.searchParams.get(name)
    if (value !== null && !/^\d{1,16}$/.test(value))
      return {reason: '`start` and `end` must be timestamps in milliseconds.'}
  }
  const interval = url.searchParams.get('interval')
  if (interval === null) return {intervalS: DEFAULT_INTERVAL_S}
  const n = Number(interval)
  if (!/^\d{1,7}$/.test(interval) || n < 1 || n > MAX_INTERVAL_S)
    return {reason: `\`interval\` must be whole seconds from 1 to ${MAX_INTERVAL_S}.`}
  return {intervalS: n}
}

/**
 * `GET /job/<job>/stats`: one TaskStat per running operation, its CPU over ONE_OFF_GAP_MS. The localnet keeps no
 * history of samples, so `start` and `end` are checked and otherwise answered with the figures of now.
 */
export async function answerStats(
  res: ServerResponse,
  ops: () => ReadonlyMap<string, OperationAccess> | null,
): Promise<void> {
  const now = ops()
  if (!now) return text(res, 404, 'No running job with that address.')
  const previous = new Map<string, ResourceSample>()
  await sampleAll(now, previous)
  await sleep(ONE_OFF_GAP_MS)
  const stats = await sampleAll(ops() ?? new Map(), previous)
  res.writeHead(200, {'content-type': 'application/json'})
  res.end(JSON.stringify(stats))
}

/** `GET /job/<job>/stats/stream`: a `TaskStat[]` event every interval until the job ends here or the client goes. */
export function streamStats(
  req: IncomingMessage,
  res: ServerResponse,
  ops: () => ReadonlyMap<string, OperationAccess> | null,
  intervalS: number,
): void {
  const first = ops()
  if (!first) return text(res, 404, 'No running job with that address.')
  res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive'})
  const previous = new Map<string, ResourceSample>()
  let closed = false
  req.on('close', () => (closed = true))
  void (async () => {
    // A first sample so the first frame already has a CPU rate.
    await sampleAll(first, previous)
    let wait = Math.min(ONE_OFF_GAP_MS, intervalS * 1000)
    while (!closed) {
      await sleep(wait)
      wait = intervalS * 1000
      const current = ops()
      if (!current || closed) break
      // A client that reads nothing gets no more frames queued than one.
      if (res.writableLength > 64 * 1024) continue
      res.write(`data: ${JSON.stringify(await sampleAll(current, previous))}\n\n`)
    }
    res.end()
  })().catch(() => res.destroy())
}

function round(n: number): number {
  return Math.round(n * 100) / 100
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {'content-type': 'text/plain; charset=utf-8'})
  res.end(body)
}
