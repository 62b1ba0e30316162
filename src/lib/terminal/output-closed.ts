/**
 * A reader of gpunet's output that went away (`gpunet job logs --follow | head -1`): the next write to stdout or
 * stderr fails with EPIPE. Node would throw that from the stream's 'error' event with a stack trace; gpunet instead
 * drops every later write and tells whoever follows a job, which then stops quietly (the job goes on).
 *
 * A follower with nothing new to write (`deployment events --follow | head -1` once the events so far are printed)
 * would learn of it only at its next line, maybe never. Only poll(2) says a pipe lost its reader without a write,
 * and Node offers no poll of a descriptor: so while someone follows, the CLI lends its piped outputs to GNU tail,
 * which polls its own output for that and dies of SIGPIPE when it is gone (`tail -f --pid`, coreutils 8.28 on).
 * Where tail cannot (BSD or busybox tail refuse `--pid` and exit), following stops at its next write, as before.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {fstatSync} from 'node:fs'

const listeners = new Set<() => void>()
let closed = false
let watching = false
let probes: ChildProcess[] = []
let probeTimer: NodeJS.Timeout | undefined

/**
 * Set by the CLI's entry: the Node 20 bundle carries its own copy of this module, which must see it too; the
 * library and the unit tests, which own no terminal, never start a probe.
 */
const PROBE_READERS = Symbol.for('gpunet.probeOutputReaders')

/** How often tail polls its output (and gpunet's pid): well inside the 2 s a pipeline's user waits. */
const PROBE_INTERVAL_S = '0.2'
/** How long someone follows before the probes start. */
const PROBE_DELAY_MS = 300

/**
 * Starts watching stdout and stderr for a reader that went away; idempotent. `probeReaders` (the CLI's entry
 * only) also watches them while someone follows, when no write would find it (see the module comment).
 */
export function watchOutputClosed(options: {probeReaders?: boolean} = {}): void {
  if (options.probeReaders) (globalThis as Record<symbol, unknown>)[PROBE_READERS] = true
  if (watching) return
  watching = true
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // After EPIPE the stream is destroyed, and each later write fails again: those are dropped too.
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error
      markClosed()
    })
  }
}

function markClosed(): void {
  if (closed) return
  closed = true
  stopProbes()
  for (const listener of listeners) listener()
}

/** Whether stdout or stderr lost its reader. */
export function outputClosed(): boolean {
  return closed
}

/** Calls `listener` once stdout or stderr loses its reader (at once if it already has); returns the unsubscribe. */
export function onOutputClosed(listener: () => void): () => void {
  watchOutputClosed()
  if (closed) {
    listener()
    return () => {}
  }
  listeners.add(listener)
  // A command that is done within PROBE_DELAY_MS (`deployment events | jq`) starts no process for it.
  if (listeners.size === 1) probeTimer = setTimeout(startProbes, PROBE_DELAY_MS).unref()
  return () => {
    listeners.delete(listener)
    if (listeners.size === 0) stopProbes()
  }
}

/** One tail per distinct pipe or socket among stdout and stderr (`2>&1 | head` is one). */
function startProbes(): void {
  if (
    closed ||
    probes.length > 0 ||
    !(globalThis as Record<symbol, unknown>)[PROBE_READERS] ||
    process.platform === 'win32'
  )
    return
  const seen = new Set<string>()
  for (const fd of [1, 2]) {
    let id: string
    try {
      const stat = fstatSync(fd)
      if (!stat.isFIFO() && !stat.isSocket()) continue
      id = `${stat.dev}:${stat.ino}`
    } catch {
      continue
    }
    if (seen.has(id)) continue
    seen.add(id)
    try {
      // Its stdout is gpunet's fd: that is the output it polls. --pid ends it with gpunet, even on SIGKILL.
      const probe = spawn('tail', ['-s', PROBE_INTERVAL_S, '-f', `--pid=${process.pid}`, '/dev/null'], {
        stdio: ['ignore', fd, 'ignore'],
      })
      probe.on('error', () => {})
      probe.on('exit', (_code, signal) => {
        probes = probes.filter((p) => p !== probe)
        if (signal === 'SIGPIPE') markClosed()
      })
      // A probe never keeps gpunet alive: it ends with gpunet's pid.
      probe.unref()
      probes.push(probe)
    } catch {
      // No tail on this machine: a write finds the reader gone, as before.
    }
  }
}

function stopProbes(): void {
  clearTimeout(probeTimer)
  for (const probe of probes) probe.kill()
  probes = []
}
