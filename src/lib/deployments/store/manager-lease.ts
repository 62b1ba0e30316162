/**
 * Leases: managers sharing one database work on a deployment (plan it, run its tasks) only while they hold its
 * lease, taken in the database with a deadline. A manager that dies leaves its leases to run out; another then takes
 * the deployment over and settles what the dead one left in flight from the chain (paying.ts).
 */
import {randomBytes} from 'node:crypto'
import {hostname} from 'node:os'

import {GpunetError, ExitCode} from '../../errors.js'
import type {ManagerContext} from '../context.js'

/** The network's manager gives a task 120 s: a lease covers one task at least. */
export const LEASE_MS = 120_000
/** The shortest lease, however large a deployment's time_scale (localnet tests). */
const MIN_LEASE_MS = 3_000

/** The lease a manager holds on itself while it runs (no deployment id starts so): how the others count it. */
export const MANAGER_LEASE_PREFIX = 'manager:'

/** This process's holder name, when its context names none. */
const PROCESS_HOLDER = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`

/** The holder name of a context's manager. */
export function holderOf(ctx: ManagerContext): string {
  return ctx.holder ?? PROCESS_HOLDER
}

/** How long a lease runs for a deployment of this time_scale. */
export function leaseMs(timeScale: number): number {
  return Math.max(MIN_LEASE_MS, Math.round(LEASE_MS / Math.max(1, timeScale)))
}

/** Takes or renews the lease: true while this manager holds it. */
export async function claim(ctx: ManagerContext, deployment: string, timeScale: number): Promise<boolean> {
  return ctx.store.claimDeployment(deployment, holderOf(ctx), leaseMs(timeScale), ctx.now())
}

/** The error of a manager that finds another holding a deployment's lease: not a failure of the task. */
export function leaseLost(deployment: string): GpunetError {
  return new GpunetError('lease_lost', `another manager holds deployment ${deployment} now`, {
    exitCode: ExitCode.FAILURE,
  })
}

/** The context's `holdLease`: renews the lease, or throws `lease_lost` when another manager holds it now. */
export function leaseHolder(ctx: ManagerContext): (deployment: string) => Promise<void> {
  return async (id) => {
    const deployment = await ctx.store.deployment(id)
    if (deployment && (await claim(ctx, id, deployment.time_scale))) return
    throw leaseLost(id)
  }
}
