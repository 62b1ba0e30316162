/**
 * Replicas being retired. A job marked draining gets no new request through its deployment's stable URL (the
 * gateways ask before each one), and the manager waits for the requests already sent to it to finish (streamed
 * answers and WebSockets included: they count until they end) before it stops the job, so a rotation or a
 * scale-down costs no request and cuts no stream shorter than the drain bound. The mark is kept in memory (this
 * manager's own gateway sees it at once) and in the job's row (draining_at), which every gateway on the store reads
 * with the deployment's rows: with several managers on one PostgreSQL the one holding the lease drains, and the
 * others' gateways send the job nothing more either; their requests in flight to it, which each writes to the store
 * with its load (autoscale/store-load.ts), are waited for too. A manager restarted mid-drain finds the row still
 * marked, and the stop it retries drains again. A job's in-memory flag goes when its row is seen ended
 * (chain-view.ts), so the set holds only jobs still running; the row keeps its mark, which no longer matters.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {LOAD_FRESH_MS} from './autoscale/store-load.js'
import type {DeploymentStore, GatewayJobs} from './store/store.js'
import type {JobRow} from './types.js'

/**
 * How long the jobs of a deployment, as its rows list them, are reused by a gateway (stable-routes.ts): the stable
 * URL asks before every request, and reading the rows each time (every job the deployment ever had) costs more than
 * the request itself. Safe to
 * reuse: whether each job serves is read live, and so is whether this manager drains it; only a new replica waits
 * this long longer for requests, and a drain by another manager on the store is seen this long later (the drain
 * waits for that).
 */
export const ROWS_REUSED_MS = 250

/** What a drain takes of the manager's context (context.ts, which holds the Draining): its drains, its bound, its log. */
type DrainContext = {draining?: Draining; drainTimeoutMs?: number; log(line: string): void}

/** What a drain reads and writes of the store: the job's mark, and the other gateways' requests in flight. */
export type DrainStore = Pick<DeploymentStore, 'markDraining' | 'readJobsInFlight'>

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
/** How often the other gateways' figures are read again from the store while draining (they write each second). */
const DRAIN_STORE_POLL_MS = 200
/**
 * What a gateway may take, past its rows' reuse, between reading the rows and counting the request it routes with
 * them, plus the time between its sampling its counts and the store's stamping them: a margin for both.
 */
const ROUTE_SLACK_MS = 250

/**
 * When another gateway's figures can be trusted for a drain marked at `markedAt` (the store's clock). The race: a
 * gateway may have read the job's rows just before the mark and routes with them for ROWS_REUSED_MS more; a
 * request it sends then is counted in flight at once, so a sample it takes after markedAt + ROWS_REUSED_MS (plus
 * ROUTE_SLACK_MS) holds every request it could still send the job, and nothing new comes after it. Figures written
 * earlier may miss one: they count what they show, and the drain waits for that gateway's next write (one each
 * LOAD_WRITE_MS). A gateway whose figures are older than LOAD_FRESH_MS stopped (or cannot reach the store, nor read
 * the rows it routes with) and is not waited for.
 */
export function drainSeenAt(markedAt: number): number {
  return markedAt + ROWS_REUSED_MS + ROUTE_SLACK_MS
}

/** The other gateways' part of a drain: their requests in flight to the job, and how many may still send it one. */
export interface ElsewhereInFlight {
  inFlight: number
  /** Gateways whose last figures were written before they could have seen the mark (drainSeenAt). */
  unsettled: number
}

/** Sums what the other gateways' fresh figures say of `job` (their counts are by lowercased address). */
export function inFlightElsewhere(figures: readonly GatewayJobs[], job: string, markedAt: number): ElsewhereInFlight {
  const key = job.toLowerCase()
  const seenAt = drainSeenAt(markedAt)
  let inFlight = 0
  let unsettled = 0
  for (const gateway of figures) {
    inFlight += gateway.inFlight[key] ?? 0
    if (gateway.at < seenAt) unsettled++
  }
  return {inFlight, unsettled}
}

/** True when a drain may end: nothing in flight at its own gateway nor elsewhere, and no other gateway unsettled. */
export function drainMayEnd(own: number, elsewhere: ElsewhereInFlight): boolean {
  return own === 0 && elsewhere.inFlight === 0 && elsewhere.unsettled === 0
}

/** The jobs being drained, where the requests in flight to a job are counted (its gateway), and the shared store. */
export class Draining {
  private readonly jobs = new Set<string>()
  private inFlight: ((job: string) => number) | null = null
  private shared: {store: DrainStore; gateway: string} | null = null

  /** Counts the stable URL's requests in flight to a job with `count` from now on (the gateway in this process). */
  countInFlightWith(count: (job: string) => number): void {
    this.inFlight = count
  }

  /**
   * Marks drains in `store` from now on, and waits for the requests in flight that the other gateways on it (all but
   * `gateway`, this manager's own) wrote there. With no other gateway writing, as for one manager, it adds no wait.
   */
  shareThrough(store: DrainStore, gateway: string): void {
    this.shared = {store, gateway}
  }

  /** True once the job was marked draining by this manager: the stable URL sends it no new request. */
  isDraining(job: string): boolean {
    return this.jobs.has(job)
  }

  /** Forgets the job: its row is closed (it ended), so no request could go to it again anyway. */
  forget(job: string): void {
    this.jobs.delete(job)
  }

  /**
   * Marks the job draining, then resolves once no request is in flight to it, here or at another gateway on the
   * store, or after `maxMs`. Throws when the store cannot be written (the stop is retried, and drains again).
   */
  async drain(job: string, maxMs = DRAIN_TIMEOUT_MS): Promise<{waitedMs: number; inFlight: number; unsettled: number}> {
    this.jobs.add(job)
    const started = Date.now()
    const shared = this.shared
    const markedAt = shared ? await shared.store.markDraining(job, Date.now()) : undefined
    let elsewhere: ElsewhereInFlight = {inFlight: 0, unsettled: 0}
    let readAt = -Infinity
    const readElsewhere = async () => {
      if (!shared || markedAt === undefined || Date.now() - readAt < DRAIN_STORE_POLL_MS) return
      readAt = Date.now()
      try {
        const figures = await shared.store.readJobsInFlight(LOAD_FRESH_MS, shared.gateway, Date.now())
        elsewhere = inFlightElsewhere(figures, job, markedAt)
      } catch {
        // Unknown while the store cannot be read: waited for, up to the bound.
        elsewhere = {inFlight: elsewhere.inFlight, unsettled: Math.max(1, elsewhere.unsettled)}
      }
    }
    await readElsewhere()
    let own = this.inFlight?.(job) ?? 0
    while (!drainMayEnd(own, elsewhere) && Date.now() - started < maxMs) {
      await sleep(DRAIN_POLL_MS)
      await readElsewhere()
      own = this.inFlight?.(job) ?? 0
    }
    return {waitedMs: Date.now() - started, inFlight: own + elsewhere.inFlight, unsettled: elsewhere.unsettled}
  }
}

/**
 * Drains a replica before its job is ended: no new request through the stable URL, the ones in flight finish (at
 * most drainBoundMs). Every path that ends a running job calls it first (runStop does); a manager without a stable
 * URL in front (no Draining in its context) has nothing to drain.
 */
export async function drainJob(ctx: DrainContext, job: string, timeScale = 1): Promise<void> {
  if (!ctx.draining) return
  const {waitedMs, inFlight, unsettled} = await ctx.draining.drain(job, drainBoundMs(ctx, timeScale))
  if (inFlight > 0) ctx.log(`job ${job}: ${inFlight} request(s) still in flight after draining ${waitedMs} ms`)
  // A bound shorter than the other gateways take to see the mark (about a second): they may still have sent one.
  if (unsettled > 0)
    ctx.log(`job ${job}: ${unsettled} other gateway(s) had not written since the drain began, after ${waitedMs} ms`)
}

/**
 * How long a drain waits: the drainTimeout setting (DRAIN_TIMEOUT_MS unless set) divided by the deployment's
 * time_scale, never below DRAIN_MIN_MS for that division.
 */
export function drainBoundMs(ctx: Pick<DrainContext, 'drainTimeoutMs'>, timeScale = 1): number {
  const bound = ctx.drainTimeoutMs ?? DRAIN_TIMEOUT_MS
  return Math.max(Math.min(DRAIN_MIN_MS, bound), bound / timeScale)
}

/** True when the job is being drained: by this manager (at once), or by any on the store (its row, as last read). */
export function isDraining(ctx: Pick<DrainContext, 'draining'>, row: Pick<JobRow, 'job' | 'draining_at'>): boolean {
  return (ctx.draining?.isDraining(row.job) ?? false) || (row.draining_at ?? null) !== null
}
