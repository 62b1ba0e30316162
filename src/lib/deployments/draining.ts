/**
 * Replicas being retired. A job marked draining gets no new request through its deployment's stable URL (the
 * localnet gateway asks before each one), and the manager waits for the requests already sent to it to finish
 * (streamed answers and WebSockets included: they count until they end) before it stops the job, so a rotation or
 * a scale-down costs no request and cuts no stream shorter than the drain bound. Held in memory: a restarted manager
 * drains again the jobs it stops from then on, and a job stopped is gone from the stable URL anyway. A job's flag
 * goes when its row is seen ended (chain-view.ts), so the set holds only jobs still running.
 */
import {setTimeout as sleep} from 'node:timers/promises'

/** What a drain takes of the manager's context (context.ts, which holds the Draining): its drains, its bound, its log. */
type DrainContext = {draining?: Draining; drainTimeoutMs?: number; log(line: string): void}

/**
 * The longest a drain waits for in-flight requests, unscaled, unless the drainTimeout setting says otherwise: long
 * enough for a model's streamed completion to end; a stream still open then is cut when its job stops. A request
 * stuck that long holds its replica's stop (and the rotation or scale-down behind it) as long.
 */
export const DRAIN_TIMEOUT_MS = 600_000
/** The shortest bound a time_scale brings it down to (a bound set below it is kept as set). */
const DRAIN_MIN_MS = 1000
/** How often the in-flight count is read again while draining. */
const DRAIN_POLL_MS = 25

/** The jobs being drained, and where the requests in flight to a job are counted (the localnet's gateway). */
export class Draining {
  private readonly jobs = new Set<string>()
  private inFlight: ((job: string) => number) | null = null

  /** Counts the stable URL's requests in flight to a job with `count` from now on (the localnet wires its gateway). */
  countInFlightWith(count: (job: string) => number): void {
    this.inFlight = count
  }

  /** True once the job was marked draining: the stable URL sends it no new request. */
  isDraining(job: string): boolean {
    return this.jobs.has(job)
  }

  /** Forgets the job: its row is closed (it ended), so no request could go to it again anyway. */
  forget(job: string): void {
    this.jobs.delete(job)
  }

  /** Marks the job draining, then resolves once no request is in flight to it, or after `maxMs`. */
  async drain(job: string, maxMs = DRAIN_TIMEOUT_MS): Promise<{waitedMs: number; inFlight: number}> {
    this.jobs.add(job)
    const started = Date.now()
    let left = this.inFlight?.(job) ?? 0
    while (left > 0 && Date.now() - started < maxMs) {
      await sleep(DRAIN_POLL_MS)
      left = this.inFlight?.(job) ?? 0
    }
    return {waitedMs: Date.now() - started, inFlight: left}
  }
}

/**
 * Drains a replica before its job is ended: no new request through the stable URL, the ones in flight finish (at
 * most drainBoundMs). Every path that ends a running job calls it first (runStop does); a manager without a stable
 * URL in front (no Draining in its context) has nothing to drain.
 */
export async function drainJob(ctx: DrainContext, job: string, timeScale = 1): Promise<void> {
  if (!ctx.draining) return
  const {waitedMs, inFlight} = await ctx.draining.drain(job, drainBoundMs(ctx, timeScale))
  if (inFlight > 0) ctx.log(`job ${job}: ${inFlight} request(s) still in flight after draining ${waitedMs} ms`)
}

/**
 * How long a drain waits: the drainTimeout setting (DRAIN_TIMEOUT_MS unless set) divided by the deployment's
 * time_scale, never below DRAIN_MIN_MS for that division.
 */
export function drainBoundMs(ctx: Pick<DrainContext, 'drainTimeoutMs'>, timeScale = 1): number {
  const bound = ctx.drainTimeoutMs ?? DRAIN_TIMEOUT_MS
  return Math.max(Math.min(DRAIN_MIN_MS, bound), bound / timeScale)
}

/** True when the job is being drained by this manager. */
export function isDraining(ctx: Pick<DrainContext, 'draining'>, job: string): boolean {
  return ctx.draining?.isDraining(job) ?? false
}
