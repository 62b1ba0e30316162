/**
 * `job stats`: a running job's resource figures per operation from its node API (`/job/<job>/stats`, or its
 * server-sent stream with --follow), read as the poster, and how they are shown: a table, or JSON lines.
 */
import type {PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'
import {describeHttpFailure, httpFetch} from '../http/client.js'
import type {MarketNetwork} from '../market/connect.js'
import {signHeader} from '../node-api/protocol.js'
import {statsPath, type TaskStat} from '../node-api/stats-protocol.js'
import type {Wallet} from '../keys/wallet.js'
import {jobNodeSource, runningJobNode} from './node-access.js'
import {stopExitCode} from './stop-signals.js'

/** Most bytes of one event or answer read from a node (a few operations' figures are far smaller). */
const MAX_FRAME_BYTES = 1024 * 1024

export interface JobStatsOptions {
  follow: boolean
  intervalS?: number
  wallet: () => Promise<Wallet>
  /** Each answer (without --follow, one). */
  frame: (stats: TaskStat[]) => void
  signal?: AbortSignal
}

/** Reads the figures once, or every interval until the job ends on its node (the stream closes). */
export async function jobStats(net: MarketNetwork, job: PublicKey, options: JobStatsOptions): Promise<void> {
  const {
    job: address,
    node,
    apiUrl,
    wallet,
  } = await runningJobNode(jobNodeSource(net), job.toBase58(), options.wallet, 'show its figures')
  const header = signHeader((m) => wallet.sign(m), {action: 'read', node, job: address})
  const url = `${apiUrl}${statsPath(address, options.follow, options.intervalS)}`
  let response
  try {
    response = await httpFetch(url, {headers: {authorization: header}, signal: options.signal})
  } catch (error) {
    if (options.signal?.aborted) throw interrupted(options.signal)
    throw new GpunetError(
      'node_api_unreachable',
      `could not reach the node API at ${apiUrl}: ${describeHttpFailure(error)}`,
      {
        exitCode: ExitCode.UNAVAILABLE,
      },
    )
  }
  if (!response.ok) {
    const body = (await response.text().catch(() => '')).slice(0, 300)
    const exitCode =
      response.status === 401 ? ExitCode.DENIED : response.status === 404 ? ExitCode.NOT_FOUND : ExitCode.UNAVAILABLE
    throw new GpunetError('node_api_refused', `the node API answered ${response.status}: ${body}`, {exitCode})
  }
  if (!options.follow) return options.frame(parseStats(await response.text()))
  let pending = ''
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      pending += Buffer.from(chunk).toString('utf8')
      for (let end = pending.indexOf('\n\n'); end !== -1; end = pending.indexOf('\n\n')) {
        const event = pending.slice(0, end)
        pending = pending.slice(end + 2)
        const data = event
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n')
        if (data) options.frame(parseStats(data))
      }
      if (pending.length > MAX_FRAME_BYTES)
        throw new GpunetError('node_api_invalid', 'the node sent an oversized event')
    }
  } catch (error) {
    if (options.signal?.aborted) throw interrupted(options.signal)
    throw error
  }
}

function interrupted(signal: AbortSignal): GpunetError {
  return new GpunetError('stats_interrupted', 'Stopped showing the figures; the job goes on.', {
    exitCode: stopExitCode(signal),
  })
}

/** The figures of an answer: entries of the wrong shape are dropped, numbers that are not finite become null. */
export function parseStats(text: string): TaskStat[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new GpunetError('node_api_invalid', 'the node answered stats that are not JSON', {
      exitCode: ExitCode.UNAVAILABLE,
    })
  }
  if (!Array.isArray(value)) return []
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null)
  return value.flatMap((entry: Record<string, Record<string, unknown>> | null): TaskStat[] => {
    if (typeof entry !== 'object' || entry === null || typeof entry.opId !== 'string') return []
    const part = (name: string) => (typeof entry[name] === 'object' && entry[name] !== null ? entry[name] : {})
    const [cpu, memory, disk, network] = ['cpu', 'memory', 'disk', 'network'].map(part) as Record<string, unknown>[]
    return [
      {
        opId: String(entry.opId).slice(0, 256),
        timestamp: num(entry.timestamp) ?? Date.now(),
        cpu: {cpu_percent: num(cpu!.cpu_percent)},
        memory: {
          memory_usage: num(memory!.memory_usage),
          memory_limit: num(memory!.memory_limit),
          memory_percent: num(memory!.memory_percent),
        },
        disk: {read: num(disk!.read), write: num(disk!.write)},
        network: {received: num(network!.received), sent: num(network!.sent)},
      },
    ]
  })
}

/**
 * The figures as table rows, a header first; `-` where a figure is not known. One row per operation, its latest
 * sample: the network's nodes answer a window of samples.
 */
export function statsTable(stats: readonly TaskStat[]): string[] {
  const latest = new Map<string, TaskStat>()
  for (const s of stats) if ((latest.get(s.opId)?.timestamp ?? -1) <= s.timestamp) latest.set(s.opId, s)
  const rows = [['OPERATION', 'CPU %', 'MEMORY', 'MEM %', 'DISK READ/WRITE', 'NET IN/OUT']]
  for (const s of latest.values()) {
    rows.push([
      s.opId.replace(/[^\x20-\x7e]/g, '?'),
      fixed(s.cpu.cpu_percent),
      `${bytes(s.memory.memory_usage)} / ${bytes(s.memory.memory_limit)}`,
      fixed(s.memory.memory_percent),
      `${bytes(s.disk.read)} / ${bytes(s.disk.write)}`,
      `${bytes(s.network.received)} / ${bytes(s.network.sent)}`,
    ])
  }
  if (stats.length === 0) rows.push(['(no operation running)', '', '', '', '', ''])
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  )
}

function fixed(n: number | null): string {
  return n === null ? '-' : n.toFixed(1)
}

function bytes(n: number | null): string {
  if (n === null) return '-'
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = n
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`
}
