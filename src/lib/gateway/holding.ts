/**
 * Requests held at a stable URL while its deployment starts from zero (docs/deployments.md, "Autoscaling"): a
 * deployment whose policy lets it scale to 0 replicas has nothing to serve a request with until its manager lists a
 * replica and that replica passes its health checks, so the gateway holds the request meanwhile (within bounds:
 * how many wait per deployment, how long each waits) instead of answering 503 at once. Past either bound the client
 * is told the service is starting and when to come back.
 */
import {ExitCode, GpunetError} from '../errors.js'
import type {Upstream} from './job-routes.js'
import type {NoReplica} from './replicas.js'

/** How many requests wait per deployment by default: more are answered 503 at once. */
export const MAX_HELD = 100
/** How long a request waits by default for a replica to become ready. */
export const HOLD_MS = 120_000
/** The longest a hold may be set to: a heavy model takes that long to load. */
export const MAX_HOLD_MS = 30 * 60_000
/** The most requests that may be set to wait per deployment: each holds a connection of the gateway's. */
export const MAX_HELD_LIMIT = 1000
/**
 * How often a held request asks again for the deployment's replicas. Each ask reads the routes' cached rows
 * (ROWS_REUSED_MS), so this adds no read of the store; a replica that becomes ready is used within it.
 */
export const HOLD_POLL_MS = 100
/** The Retry-After, in seconds, of a request turned away while its service starts: about one replica's start. */
export const STARTING_RETRY_AFTER_S = 10

/** The bounds of holding: requests waiting per deployment, and how long each waits. */
export interface HoldBounds {
  maxHeld: number
  holdMs: number
}

/** The bounds given, checked (a bad one is exit 2); a bound left out is its default. */
export function checkHoldBounds(given: Partial<HoldBounds> = {}): HoldBounds {
  const maxHeld = given.maxHeld ?? MAX_HELD
  const holdMs = given.holdMs ?? HOLD_MS
  if (!Number.isInteger(maxHeld) || maxHeld < 1 || maxHeld > MAX_HELD_LIMIT)
    throw new GpunetError('invalid_hold', `the requests held per deployment must be 1 to ${MAX_HELD_LIMIT}`, {
      exitCode: ExitCode.USAGE,
      hint: `the default is ${MAX_HELD}`,
    })
  if (!Number.isFinite(holdMs) || holdMs < 1000 || holdMs > MAX_HOLD_MS)
    throw new GpunetError('invalid_hold', 'a request may be held 1s to 30m', {
      exitCode: ExitCode.USAGE,
      hint: `the default is ${HOLD_MS / 1000}s`,
    })
  return {maxHeld, holdMs}
}

/** The requests held per deployment (lowercased, as host names come), and who is told when one is held. */
export class Holding {
  private readonly held = new Map<string, number>()
  private readonly listeners = new Set<(deployment: string) => void>()

  constructor(private readonly bounds: HoldBounds) {}

  /** The deployments (lowercased) with requests waiting now. */
  deployments(): string[] {
    return [...this.held.keys()]
  }

  /** Requests of the deployment (lowercased) waiting now. */
  heldFor(deployment: string): number {
    return this.held.get(deployment) ?? 0
  }

  /** Calls `listener` with the deployment (lowercased) when one of its requests is held and none was; answers the stop. */
  onHeld(listener: (deployment: string) => void): () => void {
    this.listeners.add(listener)
    return () => void this.listeners.delete(listener)
  }

  /**
   * Holds a request of the deployment until `replicas` names some (asked every HOLD_POLL_MS), the hold bound passes,
   * or `gone` resolves (the client left); answers the upstreams, or the page to answer instead. A request past the
   * bound of those held is answered at once.
   */
  async hold(
    deployment: string,
    replicas: () => Promise<Upstream[] | NoReplica>,
    gone: Promise<unknown>,
  ): Promise<Upstream[] | NoReplica> {
    const waiting = this.heldFor(deployment)
    if (waiting >= this.bounds.maxHeld)
      return starting(`${waiting} request(s) already wait for it to start, as many as the gateway holds`)
    this.held.set(deployment, waiting + 1)
    if (waiting === 0)
      for (const listener of this.listeners) {
        try {
          listener(deployment)
        } catch {
          // A listener's failure is its own: the request still waits.
        }
      }
    // One reaction to `gone` for the whole hold, waking the poll's wait: racing `gone` at each poll added one a
    // poll (1200 over a 120 s hold), all kept until the client left or the request was answered.
    let present = true
    let wake = () => {}
    void gone.then(() => {
      present = false
      wake()
    })
    try {
      const deadline = Date.now() + this.bounds.holdMs
      while (present) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(HOLD_POLL_MS, Math.max(0, deadline - Date.now())))
          wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        if (!present) break
        const found = await replicas()
        if (Array.isArray(found) || found.status !== 503) return found
        if (Date.now() >= deadline)
          return starting(`no replica became ready within the ${Math.round(this.bounds.holdMs / 1000)} s it waited`)
      }
      return starting('the client left')
    } finally {
      const now = this.heldFor(deployment) - 1
      if (now <= 0) this.held.delete(deployment)
      else this.held.set(deployment, now)
    }
  }
}

/** The page of a request turned away while its service starts from zero. */
function starting(why: string): NoReplica {
  return {
    status: 503,
    message: `The service is starting from zero replicas: ${why}. Try again in ${STARTING_RETRY_AFTER_S} s.`,
    reason: 'starting',
    retryAfter: STARTING_RETRY_AFTER_S,
  }
}
