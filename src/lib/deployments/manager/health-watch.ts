/**
 * What the manager sees of its running jobs' services, for INFINITE's readiness and self-healing, read as
 * serving.ts reads it (the node's continuous checks on the localnet, the manager's own probe elsewhere). Each job's first time online and the time it went offline are kept in memory: a restarted manager starts
 * the lost window over, which only delays a replacement.
 */
import type {ExposingDefinition} from '../../market/service-url.js'
import {readRecordedJob} from '../paying/chain-view.js'
import type {ManagerContext} from '../context.js'
import {exposingDefinition, replicaServes} from './serving.js'
import type {JobHealth, JobOnChain} from '../strategies/index.js'
import type {DeploymentRow} from '../types.js'

interface Seen {
  onlineSince: number | null
  offlineSince: number | null
}

const watched = new WeakMap<ManagerContext, Map<string, Seen>>()

/** The health of each running job of the deployment whose definition exposes a port; others are not watched. */
export async function watchHealth(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  jobs: JobOnChain[],
): Promise<Record<string, JobHealth>> {
  let seen = watched.get(ctx)
  if (!seen) watched.set(ctx, (seen = new Map()))
  const health: Record<string, JobHealth> = {}
  const running = jobs.filter((j) => j.state === 'RUNNING' && !j.stop_requested)
  for (const job of jobs) if (job.state !== 'RUNNING') seen.delete(job.job)
  if (running.length === 0) return health
  const definitions = new Map<number, ExposingDefinition | null>()
  const definitionOf = async (revision: number) => {
    if (!definitions.has(revision)) definitions.set(revision, await exposingDefinition(ctx, deployment.id, revision))
    return definitions.get(revision)!
  }
  await Promise.all(
    running.map(async (job) => {
      const row = await ctx.store.job(job.job)
      const definition = row ? await definitionOf(row.revision) : null
      if (!row || !definition) return
      const view = await readRecordedJob(ctx, row)
      if (!view) return
      const online = await replicaServes(ctx, deployment, view, definition)
      const now = ctx.now()
      const was = seen.get(job.job) ?? {onlineSince: null, offlineSince: null}
      const next: Seen = online
        ? {onlineSince: was.onlineSince ?? now, offlineSince: null}
        : {onlineSince: was.onlineSince, offlineSince: was.onlineSince === null ? null : (was.offlineSince ?? now)}
      seen.set(job.job, next)
      health[job.job] = {online, ...next}
    }),
  )
  return health
}
