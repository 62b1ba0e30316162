/**
 * The autoscaler's step in the worker's tick, before the strategy plans: the deployment's traffic read from the
 * gateways (load.ts), the decision taken (decide.ts) and applied to the replica count, which the strategy then
 * lists up to or stops down to (a replica stopped is drained first: runStop). Only under the deployment's lease, so
 * of several managers on one database the one holding it decides. Every change is an event with its figures.
 */
import {PublicKey} from '@solana/web3.js'

import {readMarket} from '../../market/jobs/jobs.js'
import type {ManagerContext} from '../context.js'
import {replicasChange} from './operations.js'
import {isOver, jobTimeoutSeconds, type JobOnChain, scaledMs} from '../strategies/index.js'
import type {DeploymentRow} from '../types.js'
import {affordableReplicas, tokensSpent} from '../paying/budget.js'
import {decide, type Decision} from '../autoscale/decide.js'
import {policyOf, SCALED} from '../autoscale/policy.js'

/**
 * The most replicas the budget keeps: the deployment's jobs counted at their own prices, a new listing at the
 * market's price now (what the program will copy into it); undefined without a budget.
 */
async function affordable(ctx: ManagerContext, deployment: DeploymentRow, jobs: JobOnChain[]) {
  if (deployment.budget === null || deployment.budget === undefined) return undefined
  const market = await readMarket(ctx.net.connection, ctx.net.programId, new PublicKey(deployment.market))
  const price = market.jobPrice
  const spent = tokensSpent(
    jobs.map((j) => ({
      state: j.state,
      time_start: j.timeStart,
      time_end: j.timeEnd,
      chain_timeout: j.timeout,
      chain_price: j.price,
    })),
    price,
  )
  const alive = jobs.filter((j) => !isOver(j.state) && !j.stop_requested).length
  return affordableReplicas(deployment.budget, spent, price * BigInt(jobTimeoutSeconds(deployment)), alive)
}

/**
 * Decides the deployment's replicas from its traffic and applies the decision; answers the row as it is after (the
 * same row when it has no policy, is not running, or no gateway reports its traffic).
 */
export async function autoscale(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  jobs: JobOnChain[],
): Promise<{deployment: DeploymentRow; decision: Decision | null}> {
  const policy = policyOf(deployment)
  if (!policy || !ctx.load || !SCALED.includes(deployment.status)) return {deployment, decision: null}
  const load = await ctx.load.load(deployment.id)
  const now = ctx.now()
  const decision = decide({
    policy,
    replicas: deployment.replicas,
    inFlight: load.inFlight,
    held: load.held,
    now,
    calmSince: deployment.calm_since ?? null,
    windowMs: scaledMs(deployment, policy.scale_down_after * 1000),
    affordable: await affordable(ctx, deployment, jobs),
  })
  const calm = {calm_since: decision.calmSince}
  if (decision.replicas === deployment.replicas && decision.calmSince === (deployment.calm_since ?? null))
    return {deployment, decision}
  // Only while the deployment is still one the autoscaler moves: the tick read it before deciding, and a stop that
  // came meanwhile must win (written unchecked, a scale-up stored its count and an AUTOSCALE_UP event on a
  // deployment STOPPING, and its next start listed that many replicas however idle it was).
  const change =
    decision.replicas === deployment.replicas ? calm : {...calm, ...replicasChange(deployment, decision.replicas, now)}
  const changed = await ctx.store.moveDeployment(deployment.id, SCALED, change, now)
  if (!changed) return {deployment: (await ctx.store.deployment(deployment.id)) ?? deployment, decision: null}
  if (decision.replicas === deployment.replicas) return {deployment: changed, decision}
  await ctx.store.addEvent(
    {
      deployment: deployment.id,
      category: 'Deployment',
      type: decision.kind === 'up' ? 'AUTOSCALE_UP' : 'AUTOSCALE_DOWN',
      message: decision.reason,
      tx: null,
    },
    now,
  )
  return {deployment: changed, decision}
}
