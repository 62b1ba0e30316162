/**
 * The rolling rollout of a revision: while replicas of an older revision run, the strategy is asked for one replica
 * more (its LIST names the active revision), and an old replica is stopped only once a new one serves (its job
 * RUNNING and every port it exposes online, as serving.ts reads it), so the old keep serving until then. A new replica
 * that ends on its own, or does not serve within ROLLOUT_DEADLINE_S (scaled), rolls the deployment back to the
 * revision its old replicas run, with an event.
 */
import type {ManagerContext} from '../context.js'
import {ACTIVATED_EVENT} from './revisions.js'
import {exposingDefinition, replicaReady} from './serving.js'
import {isOver, type JobOnChain} from '../strategies/index.js'
import type {DeploymentRow, JobRow} from '../types.js'

/** How long a new replica may take to serve before its revision is rolled back, in seconds (before time_scale). */
export const ROLLOUT_DEADLINE_S = 600

/** The deployment and jobs as the strategy should see them this pass. */
export interface RolloutStep {
  deployment: DeploymentRow
  jobs: JobOnChain[]
}

/** One pass of a rollout under way (none when every live replica runs the active revision). */
export async function stepRollout(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  jobs: JobOnChain[],
): Promise<RolloutStep> {
  if (deployment.status !== 'RUNNING') return {deployment, jobs}
  const rows = await ctx.store.jobs(deployment.id)
  const serving = (r: JobRow) => !isOver(r.state) && !r.stop_requested
  const old = rows.filter((r) => serving(r) && r.revision !== deployment.active_revision)
  if (old.length === 0) return {deployment, jobs}

  const now = ctx.now()
  const began = await rolloutBegan(ctx, deployment.id)
  // The replicas listed for this rollout: one that fails, or does not serve in time, fails the revision.
  const fresh = rows.filter((r) => r.revision === deployment.active_revision && r.created_at >= began)
  const ended = fresh.find((r) => isOver(r.state) && !r.stop_requested)
  if (ended) return rollBack(ctx, deployment, jobs, fresh, old, `job ${ended.job} ended on its own`)
  const deadline = (ROLLOUT_DEADLINE_S * 1000) / deployment.time_scale
  const definition = await exposingDefinition(ctx, deployment.id, deployment.active_revision)
  // Every replica of the active revision that serves counts (one listed before an earlier rollout too).
  let healthy = 0
  for (const row of rows.filter((r) => serving(r) && r.revision === deployment.active_revision)) {
    if (await replicaReady(ctx, deployment, row, definition)) healthy += 1
    else if (row.created_at >= began && now - row.created_at > deadline) {
      const why = `job ${row.job} did not serve within ${Math.round(deadline / 1000)} s`
      return rollBack(ctx, deployment, jobs, fresh, old, why)
    }
  }

  // Each new replica that serves lets one old one go: queued ones first (they serve nothing), then the oldest.
  const surplus = Math.min(old.length, healthy + old.length - deployment.replicas)
  const retire = [...old]
    .sort((a, b) => Number(a.state === 'RUNNING') - Number(b.state === 'RUNNING') || a.created_at - b.created_at)
    .slice(0, Math.max(0, surplus))
  await stopJobs(
    ctx,
    deployment,
    retire.map((r) => r.job),
  )
  const left = old.length - retire.length
  if (retire.length > 0 && left === 0)
    await event(
      ctx,
      deployment.id,
      'REVISION_ROLLED_OUT',
      `revision ${deployment.active_revision} serves every replica`,
    )
  const retired = new Set(retire.map((r) => r.job))
  return {
    deployment: left > 0 ? {...deployment, replicas: deployment.replicas + 1} : deployment,
    jobs: jobs.map((j) => (retired.has(j.job) ? {...j, stop_requested: true} : j)),
  }
}

/** When the active revision became active: its last activation event (the deployment's creation for revision 1). */
async function rolloutBegan(ctx: ManagerContext, deployment: string): Promise<number> {
  const events = await ctx.store.events(deployment)
  for (let i = events.length - 1; i >= 0; i -= 1) if (events[i]!.type === ACTIVATED_EVENT) return events[i]!.created_at
  return 0
}

/** Back to the revision the old replicas run: the new replicas stopped, their pending listings dropped. */
async function rollBack(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  jobs: JobOnChain[],
  fresh: JobRow[],
  old: JobRow[],
  why: string,
): Promise<RolloutStep> {
  const now = ctx.now()
  const failed = deployment.active_revision
  const previous = Math.max(...old.map((r) => r.revision))
  const back = await ctx.store.updateDeployment(deployment.id, {active_revision: previous}, now)
  const stopping = fresh.filter((r) => !isOver(r.state) && !r.stop_requested).map((r) => r.job)
  await stopJobs(ctx, deployment, stopping)
  for (const task of await ctx.store.tasks(deployment.id, {open: true}))
    if (task.task === 'LIST' && task.status === 'PENDING' && task.revision === failed)
      await ctx.store.updateTask(task.id, {status: 'DONE', error: `cancelled: revision ${failed} rolled back`}, now)
  await event(
    ctx,
    deployment.id,
    'REVISION_ROLLED_BACK',
    `revision ${failed} rolled back to ${previous}: ${why}; ${stopping.length} of its jobs stopped`,
  )
  const stopped = new Set(stopping)
  return {deployment: back, jobs: jobs.map((j) => (stopped.has(j.job) ? {...j, stop_requested: true} : j))}
}

/** Marks jobs as stopped by the manager and adds their STOP tasks (unless one is open). */
export async function stopJobs(ctx: ManagerContext, deployment: DeploymentRow, jobs: string[]) {
  if (jobs.length === 0) return
  const now = ctx.now()
  const open = new Set(
    (await ctx.store.tasks(deployment.id, {open: true})).filter((t) => t.task === 'STOP').map((t) => t.job),
  )
  for (const job of jobs) {
    await ctx.store.updateJob(job, {stop_requested: true}, now)
    if (!open.has(job))
      await ctx.store.addTask(
        {deployment: deployment.id, task: 'STOP', job, limit: null, revision: deployment.active_revision, due_at: now},
        now,
      )
  }
}

async function event(ctx: ManagerContext, deployment: string, type: string, message: string) {
  await ctx.store.addEvent({deployment, category: 'Deployment', type, message, tx: null}, ctx.now())
}
