/**
 * Resource figures of a running operation, for the node API's `/job/<job>/stats`: `podman stats` of its container
 * (its own cgroup and network namespace), or /proc for the processes of a host operation. A figure that cannot be
 * told apart from the host's (a host process's network, its memory limit) is null, never the host's total.
 */
import {execFile} from 'node:child_process'
import {readdirSync, readFileSync} from 'node:fs'

/** Counters at one moment; CPU as time used so far, so a rate needs two samples. */
export interface ResourceSample {
  /** Unix ms. */
  at: number
  /** CPU time used so far, in nanoseconds. */
  cpuNanos: number | null
  memoryUsage: number | null
  memoryLimit: number | null
  diskRead: number | null
  diskWrite: number | null
  netReceived: number | null
  netSent: number | null
}

/** `podman stats` of one container: null when podman cannot tell (it ended, or podman failed). */
export function podmanSample(podman: string, env: NodeJS.ProcessEnv, name: string): Promise<ResourceSample | null> {
  return new Promise((resolve) => {
    const args = ['stats', '--no-stream', '--no-reset', '--format', '{{json .ContainerStats}}', name]
    execFile(podman, args, {env, timeout: 10_000}, (error, stdout) => {
      if (error) return resolve(null)
      try {
        const s = JSON.parse(stdout) as Record<string, unknown>
        const n = (key: string) => (typeof s[key] === 'number' && Number.isFinite(s[key]) ? (s[key] as number) : null)
        resolve({
          at: Date.now(),
          cpuNanos: n('CPUNano'),
          memoryUsage: n('MemUsage'),
          memoryLimit: n('MemLimit'),
          diskRead: n('BlockInput'),
          diskWrite: n('BlockOutput'),
          netReceived: n('NetInput'),
          netSent: n('NetOutput'),
        })
      } catch {
        resolve(null)
      }
    })
  })
}

/** The env variable marking every process of a host operation (host-process.ts). */
const MARKER = 'GPUNET_OPERATION'
/** USER_HZ: the unit of /proc/<pid>/stat times on every Linux architecture gpunet runs on. */
const TICKS_PER_SECOND = 100

/**
 * The processes of the host operation whose first process is `pid` (every process carrying its marker), summed:
 * CPU time (reaped children's included, through their parents), resident memory, and bytes read and written to
 * storage. Network is null: a host process shares the host's network namespace, whose totals are not the job's.
 */
export function hostSample(pid: number | undefined): ResourceSample | null {
  if (pid === undefined) return null
  const marker = markerOf(pid)
  if (marker === null) return null
  const needle = Buffer.from(`${MARKER}=${marker}\0`)
  let ticks = 0
  let rss = 0
  let read: number | null = 0
  let written: number | null = 0
  let found = 0
  for (const entry of safeList('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (!readFileSync(`/proc/${entry}/environ`).includes(needle)) continue
      // The fields after the command name (which may hold spaces) are read from its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0)
      rss += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1] ?? 0) * 1024
      const io = ioOf(entry)
      read = io && read !== null ? read + io.read : null
      written = io && written !== null ? written + io.write : null
      found++
    } catch {
      // Ended meanwhile, or not ours to read.
    }
  }
  if (found === 0) return null
  return {
    at: Date.now(),
    cpuNanos: (ticks / TICKS_PER_SECOND) * 1e9,
    memoryUsage: rss,
    memoryLimit: null,
    diskRead: read,
    diskWrite: written,
    netReceived: null,
    netSent: null,
  }
}

function markerOf(pid: number): string | null {
  try {
    const pair = readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .find((p) => p.startsWith(`${MARKER}=`))
    return pair ? pair.slice(MARKER.length + 1) : null
  } catch {
    return null
  }
}

function ioOf(pid: string): {read: number; write: number} | null {
  try {
    const text = readFileSync(`/proc/${pid}/io`, 'utf8')
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
    const io = {read: field('read_bytes'), write: field('write_bytes')}
    return Number.isNaN(io.read) || Number.isNaN(io.write) ? null : io
  } catch {
    return null
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
