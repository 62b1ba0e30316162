/**
 * An autoscaling policy (docs/deployments.md, "Autoscaling"): the fewest and most replicas, the in-flight requests
 * one replica takes, and how long the load must fit in one replica less before one is scaled away. The checks are
 * here once, for the CLI (exit 2, nothing sent) and for the manager (400, nothing changed).
 */
import {POLL_MS} from '../strategies/durations.js'
import type {DeploymentRow, Strategy} from '../types.js'

/** The policy as the API sends it and the store keeps it (snake_case, seconds before time_scale). */
export interface AutoscalePolicy {
  min_replicas: number
  max_replicas: number
  target_concurrency: number
  /** Seconds, divided by the deployment's time_scale as every duration of its strategy. */
  scale_down_after: number
}

/** The most replicas a policy scales to (the manager's replica bound). */
export const MAX_POLICY_REPLICAS = 100
/** The scale-down window when none is given: 5 minutes. */
export const DEFAULT_SCALE_DOWN_AFTER_S = 300
/** The shortest window: two of the manager's polls, so a decision down is never taken on one poll's figures. */
export const MIN_SCALE_DOWN_AFTER_S = (2 * POLL_MS) / 1000
/** The strategies that keep a service running, and so take a policy; SIMPLE and SCHEDULED list for a while only. */
export const POLICY_STRATEGIES: readonly Strategy[] = ['SIMPLE-EXTEND', 'INFINITE']

/** The states in which traffic moves the replica count (a stopping or unfunded deployment is left alone). */
export const SCALED: readonly DeploymentRow['status'][] = ['STARTING', 'RUNNING']

/** Why a policy is refused: a code, a sentence, and what to give instead. */
export interface PolicyProblem {
  code: string
  message: string
  hint: string
}

/** The policy a deployment row holds; null without one. */
export function policyOf(deployment: Partial<DeploymentRow>): AutoscalePolicy | null {
  if (deployment.max_replicas === null || deployment.max_replicas === undefined) return null
  return {
    min_replicas: deployment.min_replicas ?? 0,
    max_replicas: deployment.max_replicas,
    target_concurrency: deployment.target_concurrency ?? 1,
    scale_down_after: deployment.scale_down_after ?? DEFAULT_SCALE_DOWN_AFTER_S,
  }
}

/** The row's columns of a policy (null clears it: `autoscale --off`, `scale ID N`). */
export function policyColumns(
  policy: AutoscalePolicy | null,
): Pick<DeploymentRow, 'min_replicas' | 'max_replicas' | 'target_concurrency' | 'scale_down_after' | 'calm_since'> {
  return {
    min_replicas: policy?.min_replicas ?? null,
    max_replicas: policy?.max_replicas ?? null,
    target_concurrency: policy?.target_concurrency ?? null,
    scale_down_after: policy?.scale_down_after ?? null,
    calm_since: null,
  }
}

const wholeIn = (value: unknown, low: number, high: number) =>
  typeof value === 'number' && Number.isInteger(value) && value >= low && value <= high

/**
 * What is wrong with a policy for a deployment of `strategy`, or null: min 0..max, max 1..100, a target above 0, a
 * window of at least two polls (whole seconds), and a strategy that keeps a service running. `flag` names a member
 * as the caller knows it (the CLI's flags, the API's members).
 */
export function policyProblem(
  policy: Record<string, unknown>,
  strategy: string,
  flag: (member: keyof AutoscalePolicy) => string = (member) => member,
): PolicyProblem | null {
  if (!POLICY_STRATEGIES.includes(strategy as Strategy))
    return {
      code: 'policy_strategy',
      message: `a ${strategy} deployment takes no autoscaling policy: only ${POLICY_STRATEGIES.join(' and ')} keep a service running`,
      hint: 'create it with --strategy SIMPLE-EXTEND or INFINITE, or scale it by hand (gpunet deployment scale ID N)',
    }
  const {min_replicas: min, max_replicas: max, target_concurrency: target, scale_down_after: window} = policy
  if (!wholeIn(max, 1, MAX_POLICY_REPLICAS))
    return {
      code: 'invalid_max_replicas',
      message: `${flag('max_replicas')} must be a whole number from 1 to ${MAX_POLICY_REPLICAS}`,
      hint: `give ${flag('max_replicas')} of at most ${MAX_POLICY_REPLICAS}`,
    }
  if (!wholeIn(min, 0, MAX_POLICY_REPLICAS))
    return {
      code: 'invalid_min_replicas',
      message: `${flag('min_replicas')} must be a whole number from 0 (scale to zero) to ${MAX_POLICY_REPLICAS}`,
      hint: `give ${flag('min_replicas')} 0 or more`,
    }
  if ((min as number) > (max as number))
    return {
      code: 'min_above_max',
      message: `${flag('min_replicas')} ${String(min)} is above ${flag('max_replicas')} ${String(max)}`,
      hint: `give ${flag('min_replicas')} at most ${flag('max_replicas')}`,
    }
  if (typeof target !== 'number' || !Number.isFinite(target) || target <= 0 || target > 1_000_000)
    return {
      code: 'invalid_target_concurrency',
      message: `${flag('target_concurrency')} must be a number above 0 (the in-flight requests one replica takes)`,
      hint: `give ${flag('target_concurrency')} such as 2`,
    }
  if (!wholeIn(window, MIN_SCALE_DOWN_AFTER_S, 30 * 86_400))
    return {
      code: 'invalid_scale_down_after',
      message: `${flag('scale_down_after')} must be whole seconds from ${MIN_SCALE_DOWN_AFTER_S} s (two of the manager's polls, divided by the time scale as every duration) to 30 days`,
      hint: `give ${flag('scale_down_after')} of ${MIN_SCALE_DOWN_AFTER_S}s or more (default 5m)`,
    }
  return null
}

/** The replica count a policy starts a deployment at: `replicas` brought within min..max. */
export function clampReplicas(policy: AutoscalePolicy, replicas: number): number {
  return Math.min(policy.max_replicas, Math.max(policy.min_replicas, replicas))
}
