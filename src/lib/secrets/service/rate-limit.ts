/** A fixed allowance of requests per window, e.g. 20 logins per minute. */
export interface RateLimit {
  limit: number
  windowMs: number
}

/** Counts hits per key in fixed windows; in memory, so each instance of the service counts on its own. */
export class RateLimiter {
  private readonly windows = new Map<string, {count: number; resetAt: number}>()

  constructor(private readonly rule: RateLimit) {}

  /** Counts a hit; answers how many seconds to wait when the key is over its allowance. */
  hit(key: string, now = Date.now()): {allowed: true} | {allowed: false; retryAfter: number} {
    let window = this.windows.get(key)
    if (!window || window.resetAt <= now) {
      if (this.windows.size >= 10_000) this.sweep(now)
      window = {count: 0, resetAt: now + this.rule.windowMs}
      this.windows.set(key, window)
    }
    window.count += 1
    if (window.count <= this.rule.limit) return {allowed: true}
    return {allowed: false, retryAfter: Math.max(1, Math.ceil((window.resetAt - now) / 1000))}
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key)
  }
}
