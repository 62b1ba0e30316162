/**
 * The manager's answer to its gateways (load.ts' HoldsAtZero): a deployment whose policy may take it to 0 replicas
 * has its requests held while no replica is ready (gateway/holding.ts), since a held request is what scales it up;
 * any other deployment's stable URL answers 503 at once as before. Read from the store, so every manager on one
 * PostgreSQL answers alike.
 */
import type {ManagerContext} from '../context.js'
import type {HoldsAtZero} from './load.js'
import {policyOf, SCALED} from './policy.js'

/** True for a deployment the autoscaler moves (STARTING, RUNNING) whose policy's minimum is 0 replicas. */
export function holdsAtZero(ctx: Pick<ManagerContext, 'store'>): HoldsAtZero {
  return async (id) => {
    const row = await ctx.store.deployment(id)
    return row !== undefined && SCALED.includes(row.status) && policyOf(row)?.min_replicas === 0
  }
}
