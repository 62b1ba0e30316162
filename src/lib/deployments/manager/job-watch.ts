/**
 * The one watch of a deployment's running jobs, each pass: an INFINITE one's readiness for rotations (serving.ts'
 * reading: the node's continuous checks on the localnet, the manager's own probe elsewhere), and, for a manager
 * with no stream of its deployment proxies (`deployment serve`), the tunnel watch fed by its own probe
 * (tunnel-watch.ts), which its gateway reads for every strategy (probedForGateway). Nothing is kept in memory:
 * what a restarted manager needs is in the store.
 */
import type {ExposingDefinition} from '../../market/service-url.js'
import {readRecordedJob} from '../paying/chain-view.js'
import type {ManagerContext} from '../context.js'
import {exposingDefinition, replicaServes, tunnelDefinition} from './serving.js'
import {probeTunnels} from './tunnel-watch.js'
import type {JobHealth, JobOnChain} from '../strategies/index.js'
import type {DeploymentRow} from '../types.js'

/**
 * True when the manager's probe is what its gateway reads of every replica (`deployment serve`: its stable URL calls
 * a replica ready once the probe saw it serve, the job's `tunnel` up), so the jobs of every strategy are watched, not
 * only INFINITE's. The localnet's gateway asks its nodes instead, and a stream feeds the tunnel watch there.
 */
export function probedForGateway(ctx: Pick<ManagerContext, 'gateway' | 'tunnelStream'>): boolean {
  return ctx.gateway !== undefined && !ctx.tunnelStream
}

/** The health of each running job of the deployment whose definition exposes a port; others are not watched. */
export async function watchJobs(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  jobs: JobOnChain[],
): Promise<Record<string, JobHealth>> {
  const health: Record<string, JobHealth> = {}
  const running = jobs.filter((j) => j.state === 'RUNNING' && !j.stop_requested)
  if (running.length === 0) return health
  const definitions = new Map<number, ExposingDefinition | null>()
  const definitionOf = async (revision: number) => {
    if (!definitions.has(revision)) definitions.set(revision, await exposingDefinition(ctx, deployment.id, revision))
    return definitions.get(revision)!
  }
  // Without a stream, the probe is the tunnel's signal, as the network's watcher reads its FRP server's (RUNNING
  // deployments only).
  const probing = !ctx.tunnelStream && deployment.status === 'RUNNING'
  const probes = new Map<string, boolean>()
  await Promise.all(
    running.map(async (job) => {
      const row = await ctx.store.job(job.job)
      const definition = row ? await definitionOf(row.revision) : null
      if (!row || !definition) return
      const view = await readRecordedJob(ctx, row)
      if (!view) return
      const online = await replicaServes(ctx, deployment, view, definition)
      health[job.job] = {online, cameUp: online || (row.tunnel ?? null) !== null}
      if (!probing) return
      // Only the checks frpc runs (HTTP GET expecting 200) count for the tunnel: read again when others are there.
      const tunnel = tunnelDefinition(definition)
      probes.set(job.job, tunnel === definition ? online : await replicaServes(ctx, deployment, view, tunnel))
    }),
  )
  if (probes.size > 0) await probeTunnels(ctx, deployment, probes)
  return health
}
