/**
 * What `deployment create` and `deployment autoscale` check of an autoscaling policy and a budget before anything is
 * sent (exit 2), with the same checks as the manager's (autoscale/policy.ts), and how `deployment get` shows the
 * manager's autoscaling status.
 */
import {ExitCode, GpunetError, isGpunetError} from '../../errors.js'
import {TOKEN_DECIMALS} from '../../market/networks.js'
import {durationMs} from '../../text/durations.js'
import {type AutoscalePolicy, DEFAULT_SCALE_DOWN_AFTER_S, policyProblem} from '../autoscale/policy.js'

/** The flags as given (undefined: not given). */
export interface AutoscaleFlags {
  'min-replicas'?: number
  'max-replicas'?: number
  'target-concurrency'?: string
  'scale-down-after'?: string
  budget?: string
}

/** The flag of each policy member, as the errors name it. */
const FLAG: Record<keyof AutoscalePolicy, string> = {
  min_replicas: '--min-replicas',
  max_replicas: '--max-replicas',
  target_concurrency: '--target-concurrency',
  scale_down_after: '--scale-down-after',
}

const usage = (code: string, message: string, hint: string) =>
  new GpunetError(code, message, {exitCode: ExitCode.USAGE, hint: `${hint}; nothing was changed`})

/** True when any policy flag (not the budget) was given. */
export function givesPolicy(flags: AutoscaleFlags): boolean {
  return (['min-replicas', 'max-replicas', 'target-concurrency', 'scale-down-after'] as const).some(
    (flag) => flags[flag] !== undefined,
  )
}

/**
 * The policy the flags ask for, over `current` (the deployment's, when it has one: each flag not given keeps its
 * member), checked for `strategy`; undefined when no policy flag was given. Exit 2 for any bad value.
 */
export function policyFromFlags(
  flags: AutoscaleFlags,
  strategy: string,
  current: AutoscalePolicy | null = null,
): AutoscalePolicy | undefined {
  if (!givesPolicy(flags)) return undefined
  const window = flags['scale-down-after']
  let seconds: number | undefined
  if (window !== undefined) {
    const ms = durationMs(window)
    if (ms === null || ms % 1000 !== 0)
      throw usage(
        'invalid_scale_down_after',
        `--scale-down-after ${JSON.stringify(window)} is not a duration in whole seconds`,
        'give a duration such as 30s, 5m or 1h',
      )
    seconds = ms / 1000
  }
  const target = flags['target-concurrency']
  const policy = {
    min_replicas: flags['min-replicas'] ?? current?.min_replicas ?? 1,
    max_replicas: flags['max-replicas'] ?? current?.max_replicas,
    target_concurrency: target === undefined ? current?.target_concurrency : numberOf(target),
    scale_down_after: seconds ?? current?.scale_down_after ?? DEFAULT_SCALE_DOWN_AFTER_S,
  }
  if (policy.max_replicas === undefined)
    throw usage('max_replicas_missing', 'a policy needs --max-replicas', 'give --max-replicas M (at most 100)')
  if (policy.target_concurrency === undefined)
    throw usage(
      'target_concurrency_missing',
      'a policy needs --target-concurrency',
      'give --target-concurrency C, the in-flight requests one replica takes',
    )
  const problem = policyProblem(policy, strategy, (member) => FLAG[member])
  if (problem) throw usage(problem.code, problem.message, problem.hint)
  return policy as AutoscalePolicy
}

/** A number as typed (`2`, `0.5`), NaN for any other text (refused by the policy's check). */
function numberOf(text: string): number {
  return /^\s*[+-]?(\d+(\.\d*)?|\.\d+)\s*$/.test(text) ? Number(text) : NaN
}

/** `--budget` as the API takes it (tokens, above 0, at most the token's decimals); undefined when not given. */
export function budgetFromFlag(text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const tokens = numberOf(text)
  const decimals = text.trim().split('.')[1]?.length ?? 0
  if (!Number.isFinite(tokens) || tokens <= 0 || decimals > TOKEN_DECIMALS || tokens > 2 ** 53 / 10 ** TOKEN_DECIMALS)
    throw usage(
      'invalid_budget',
      `--budget ${JSON.stringify(text)} is not an amount of tokens above 0 (at most ${TOKEN_DECIMALS} decimals)`,
      'give the most tokens the deployment may spend, e.g. --budget 25',
    )
  return tokens
}

/**
 * Exit 2 when a policy or a budget is `asked` of the network's hosted manager: it runs no gpunet autoscaler and
 * gpunet never sees its traffic (requests go to the network's own load-balanced URL).
 */
export function refuseOnHostedManager(hosted: boolean, asked: boolean): void {
  if (!hosted || !asked) return
  throw new GpunetError(
    'autoscale_unsupported',
    "the network's hosted manager takes no --min-replicas, --max-replicas, --target-concurrency, --scale-down-after or --budget: autoscaling needs the traffic, which only gpunet's gateway sees",
    {
      exitCode: ExitCode.USAGE,
      hint: 'front it with your own manager and gateway: `gpunet deployment serve` (docs/deployments.md, "Autoscaling"), then pass --manager its URL; nothing was changed',
    },
  )
}

/** The manager's refusals of a policy or a budget: the caller's input, so exit 2 as the local checks are. */
export const POLICY_REFUSALS: ReadonlySet<string> = new Set([
  'policy_strategy',
  'invalid_min_replicas',
  'invalid_max_replicas',
  'min_above_max',
  'invalid_target_concurrency',
  'invalid_scale_down_after',
  'invalid_budget',
  'budget_below_deposit',
])

/** Runs a request that carries a policy or a budget: the manager's refusal of either is exit 2, as the local checks. */
export async function policyRequest<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send()
  } catch (error) {
    if (!isGpunetError(error) || !POLICY_REFUSALS.has(error.code)) throw error
    throw new GpunetError(error.code, error.message, {
      exitCode: ExitCode.USAGE,
      hint: error.hint,
      fields: error.fields,
      cause: error,
    })
  }
}
