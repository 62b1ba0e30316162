/**
 * The autoscaling decision, a pure function of the policy, the replicas, the traffic and the time: up at once to
 * what the demand needs (ceil((in flight + held) / target), from 0 on any held request), down one replica at a time
 * once the load has fitted in one replica less at 70% of target for the whole window (the hysteresis keeps a load
 * near a boundary from scaling up and down in turn), never below min nor above max, and never past what the budget
 * can still pay for.
 */
import type {AutoscalePolicy} from './policy.js'

/** A scale-down waits until the load would fit in one replica less at this share of the target. */
export const SCALE_DOWN_SHARE = 0.7

export interface DecideInput {
  policy: AutoscalePolicy
  /** The replicas the deployment keeps now. */
  replicas: number
  inFlight: number
  held: number
  /** ms */
  now: number
  /** Since when the load fits in one replica less (the row's calm_since); null while it does not. */
  calmSince: number | null
  /** The scale-down window, scaled by the deployment's time_scale, in ms. */
  windowMs: number
  /** The most replicas the budget can still keep (paying/budget.ts); absent, no budget. */
  affordable?: number
}

export type DecisionKind = 'up' | 'down' | 'hold'

export interface Decision {
  kind: DecisionKind
  /** The replicas to keep from now on. */
  replicas: number
  /** What the demand asks for before the bounds: ceil(demand / target), at least 1 with a request held. */
  wanted: number
  /** The row's new calm_since. */
  calmSince: number | null
  /** Why, with the figures, as the decision's event says it. */
  reason: string
}

/** The decision of one tick. */
export function decide(input: DecideInput): Decision {
  const {policy, replicas, now} = input
  const inFlight = Math.max(0, input.inFlight)
  const held = Math.max(0, input.held)
  const demand = inFlight + held
  const target = policy.target_concurrency
  const wanted = Math.max(Math.ceil(demand / target), held > 0 ? 1 : 0)
  const cap = Math.max(0, Math.min(policy.max_replicas, input.affordable ?? Infinity))
  const floor = Math.min(policy.min_replicas, cap)
  const figures = `in flight ${inFlight}, held ${held}, target ${target} per replica, wanted ${wanted}, min ${policy.min_replicas}, max ${policy.max_replicas}${input.affordable === undefined ? '' : `, the budget pays for ${input.affordable}`}`
  const result = (kind: DecisionKind, to: number, calmSince: number | null, why: string): Decision => ({
    kind,
    replicas: to,
    wanted,
    calmSince,
    reason: `${why} (${figures})`,
  })
  // Bounds first: a policy just set (or lowered), or a budget running short, moves the count at once.
  if (replicas > cap) return result('down', cap, null, `${replicas} -> ${cap} replicas: above the most allowed`)
  const up = Math.min(cap, Math.max(wanted, floor))
  if (up > replicas) {
    const why = wanted > replicas ? 'demand above target' : 'below min replicas'
    return result('up', up, null, `${replicas} -> ${up} replicas: ${why}`)
  }
  // Down only when the load fits in one replica less with room to spare, and has for the whole window.
  const fewer = replicas - 1
  const fits = fewer >= floor && wanted <= fewer && demand <= SCALE_DOWN_SHARE * target * fewer
  if (!fits) return result('hold', replicas, null, `${replicas} replicas kept`)
  const since = input.calmSince ?? now
  if (now - since < input.windowMs)
    return result('hold', replicas, since, `${replicas} replicas kept: calm since ${since}`)
  return result(
    'down',
    fewer,
    now,
    `${replicas} -> ${fewer} replicas: below ${SCALE_DOWN_SHARE * 100}% of target for the window`,
  )
}
