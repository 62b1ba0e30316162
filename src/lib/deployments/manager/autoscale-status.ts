/**
 * What `deployment get` shows of autoscaling and cost (gpunet's `GET /:id/autoscale`): the policy, the traffic now,
 * the replicas, the spend so far against the budget, the burn rate at the current replicas, and how long the vault
 * lasts at the rate of every running deployment it pays for (a shared vault pays for all of them).
 */
import type {ManagerContext} from '../context.js'
import {deploymentsOnVault} from './vault-operations.js'
import {readVaultCosts} from '../paying/deposit.js'
import {paying} from '../paying/floor.js'
import {isOver} from '../strategies/index.js'
import type {DeploymentRow} from '../types.js'
import {feesSpent, tokensSpent} from '../paying/budget.js'
import {type AutoscalePolicy, policyOf} from '../autoscale/policy.js'

/** The answer of `GET /:id/autoscale`; token amounts in base units, as strings (they may pass 2^53 in sums). */
export interface AutoscaleStatus {
  policy: AutoscalePolicy | null
  /** The gateways' figures now; null when no gateway in front of this manager reports traffic. */
  signal: {in_flight: number; held: number; at: string} | null
  replicas: number
  active_jobs: number
  spend: {token_base_units: string; fee_lamports: string; budget_base_units: string | null}
  /** Token base units an hour at the current replicas (each replica pays the market's price a second). */
  burn_rate_per_hour: string
  vault: {
    address: string
    token_base_units: string
    /** Token base units an hour of every running deployment paying from it. */
    burn_rate_per_hour: string
    /** The running deployments it pays for. */
    deployments: number
    /** Seconds the vault's tokens last at that rate; null while nothing pays from it. */
    lasts_seconds: number | null
  }
}

/** The deployment's autoscaling and cost, read from the store, the gateways and the chain (one read of the vault). */
export async function autoscaleStatus(ctx: ManagerContext, deployment: DeploymentRow): Promise<AutoscaleStatus> {
  const sharers = await deploymentsOnVault(ctx, deployment.owner, deployment.vault)
  const running = sharers.filter((d) => paying(d) === 'lists')
  const chain = await readVaultCosts(ctx.net, deployment.vault, [deployment.market, ...running.map((d) => d.market)])
  const price = chain.prices.get(deployment.market)!
  const [jobs, tasks, load] = await Promise.all([
    ctx.store.jobs(deployment.id),
    ctx.store.tasks(deployment.id),
    ctx.load ? ctx.load.load(deployment.id) : Promise.resolve(null),
  ])
  const hourly = (d: Pick<DeploymentRow, 'market' | 'replicas'>) =>
    chain.prices.get(d.market)! * BigInt(d.replicas) * 3600n
  const vaultHourly = running.reduce((sum, d) => sum + hourly(d), 0n)
  const tokens = chain.balances.tokens
  return {
    policy: policyOf(deployment),
    signal: load && {in_flight: load.inFlight, held: load.held, at: new Date(load.at).toISOString()},
    replicas: deployment.replicas,
    active_jobs: jobs.filter((j) => !isOver(j.state)).length,
    spend: {
      token_base_units: String(tokensSpent(jobs, price)),
      fee_lamports: String(feesSpent(tasks, jobs.length)),
      budget_base_units:
        deployment.budget === null || deployment.budget === undefined ? null : String(deployment.budget),
    },
    burn_rate_per_hour: String(paying(deployment) === 'lists' ? hourly(deployment) : 0n),
    vault: {
      address: deployment.vault,
      token_base_units: String(tokens),
      burn_rate_per_hour: String(vaultHourly),
      deployments: running.length,
      lasts_seconds: vaultHourly === 0n ? null : Number((tokens * 3600n) / vaultHourly),
    },
  }
}
