import type {JobAuthority, JobRecord} from './auth.js'

export interface JobCacheOptions {
  /** How long a job's record is reused; job tokens die at most this long after their job. */
  ttlMs?: number
  /** Jobs (and definitions) kept at most; the oldest go first. */
  maxEntries?: number
  now?: () => number
}

/** Jobs are re-read after 3 s: a stopped job's tokens stop working within that. */
export const JOB_CACHE_TTL_MS = 3000

/**
 * A job authority that remembers answers: a job's record for a few seconds (a node reading its secrets, every
 * job token request, logins of one job), a definition for as long as it is kept (a CID's content never changes).
 * Concurrent lookups of one job share one request; failures are not remembered.
 */
export function cachedJobAuthority(inner: JobAuthority, options: JobCacheOptions = {}): JobAuthority {
  const ttlMs = Math.min(options.ttlMs ?? JOB_CACHE_TTL_MS, 5000)
  const maxEntries = options.maxEntries ?? 10_000
  const now = options.now ?? Date.now
  const jobs = new BoundedMap<Promise<JobRecord | null>>(maxEntries)
  const definitions = new BoundedMap<Promise<unknown>>(maxEntries)
  return {
    getJob(job, fresh) {
      if (fresh) jobs.forget(job)
      return jobs.remember(job, now() + ttlMs, now(), () => inner.getJob(job, fresh))
    },
    getDefinition(cid) {
      return definitions.remember(cid, Number.POSITIVE_INFINITY, now(), () => inner.getDefinition(cid))
    },
  }
}

/** A Map of promises with expiry times and a size bound; a rejected promise is dropped at once. */
class BoundedMap<T extends Promise<unknown>> {
  private readonly entries = new Map<string, {value: T; expiresAt: number}>()

  constructor(private readonly max: number) {}

  forget(key: string): void {
    this.entries.delete(key)
  }

  remember(key: string, expiresAt: number, now: number, load: () => T): T {
    const hit = this.entries.get(key)
    if (hit && hit.expiresAt > now) return hit.value
    this.entries.delete(key)
    const value = load()
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string)
    this.entries.set(key, {value, expiresAt})
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key)
    })
    return value
  }
}
