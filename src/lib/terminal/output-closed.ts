/**
 * A reader of gpunet's output that went away (`gpunet job logs --follow | head -1`): the next write to stdout or
 * stderr fails with EPIPE. Node would throw that from the stream's 'error' event with a stack trace; gpunet instead
 * drops every later write and tells whoever follows a job, which then stops quietly (the job goes on).
 */
const listeners = new Set<() => void>()
let closed = false
let watching = false

/** Starts watching stdout and stderr for a reader that went away; idempotent. */
export function watchOutputClosed(): void {
  if (watching) return
  watching = true
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // After EPIPE the stream is destroyed, and each later write fails again: those are dropped too.
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error
      if (closed) return
      closed = true
      for (const listener of listeners) listener()
    })
  }
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
  return () => listeners.delete(listener)
}
