/** Polling and repeatable randomness, shared by the end-to-end and fuzz tests. */

/** Polls `check` every `everyMs` (200 ms) until it returns a value, or fails after `ms`. */
export async function eventually<T>(
  what: string,
  ms: number,
  check: () => Promise<T | undefined>,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/** mulberry32: a small PRNG, so every run of a fuzz test sends the same inputs. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
