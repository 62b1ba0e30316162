/** A fixed allowance of requests per window, e.g. 20 logins per minute. */
export interface RateLimit {
  limit: number
  windowMs: number
}

/** Counts hits per key in fixed windows; in memory, so each instance of the service counts on its own. */
export class RateLimiter {
  private readonly windows = new Map<string, {count: number; resetAt: number; members?: Set<string>}>()

  constructor(private readonly rule: RateLimit) {}

  /** Counts a hit for the key. */
  hit(key: string, now = Date.now()): void {
    let window = this.windows.get(key)
    if (!window || window.resetAt <= now) {
      if (this.windows.size >= 10_000) this.sweep(now)
      window = {count: 0, resetAt: now + this.rule.windowMs}
      this.windows.set(key, window)
    }
    window.count += 1
  }

  /**
   * Counts `member` for the key once per window (e.g. each new owner once per IP, however many of its first writes
   * arrive together). At most `limit` members are kept per key: past that the key is blocked anyway.
   */
  hitOnce(key: string, member: string, now = Date.now()): void {
    const current = this.windows.get(key)
    const members = current && current.resetAt > now ? current.members : undefined
    if (members?.has(member)) return
    this.hit(key, now)
    const window = this.windows.get(key)!
    window.members ??= new Set()
    if (window.members.size < this.rule.limit) window.members.add(member)
  }

  /** Seconds to wait when the key has used its allowance in this window; undefined while it may go on. */
  blocked(key: string, now = Date.now()): number | undefined {
    const window = this.windows.get(key)
    if (!window || window.resetAt <= now || window.count < this.rule.limit) return undefined
    return Math.max(1, Math.ceil((window.resetAt - now) / 1000))
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key)
  }
}
