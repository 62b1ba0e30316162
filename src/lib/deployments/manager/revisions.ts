/**
 * Revisions: a new job definition for a running deployment (the network's `create-revision`), or an earlier one made
 * active again (`update-active-revision`). The definition is checked as `create` checks it; the rollout that
 * follows (rollout.ts) replaces the replicas one by one.
 */
import {badRequest, notFound, wrongState} from '../../http/api-error.js'
import type {ManagerContext} from '../context.js'
import type {DeploymentRow} from '../types.js'
import {listedDefinition, uploadListed} from './listed-definition.js'

/** 409 while a move between markets is under way: a rollout and a move never run at once (move.ts). */
function refuseWhileMoving(deployment: DeploymentRow): void {
  if (deployment.move_from)
    throw wrongState(
      `deployment ${deployment.id} is moving from ${deployment.move_from} to ${deployment.market}`,
      `revise it once the move is over: gpunet deployment events ${deployment.id} --follow`,
    )
}

/** The event that starts a rollout: its time is when the rollout began (rollout.ts reads it). */
export const ACTIVATED_EVENT = 'REVISION_ACTIVATED'

/** Adds a revision of `definition` and makes it active; a running deployment then rolls it out. */
export async function createRevision(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  definition: unknown,
): Promise<DeploymentRow> {
  if (deployment.status === 'ARCHIVED') throw wrongState(`deployment ${deployment.id} is archived`)
  refuseWhileMoving(deployment)
  const listed = await listedDefinition(ctx, deployment.id, definition, 'nothing was changed')
  await uploadListed(ctx, listed)
  const {cid, text} = listed
  const revisions = await ctx.store.revisions(deployment.id)
  const revision = Math.max(0, ...revisions.map((r) => r.revision)) + 1
  const now = ctx.now()
  const revised = await ctx.store.addRevision(
    {deployment: deployment.id, revision, ipfs_definition_hash: cid, job_definition: text, created_at: now},
    now,
  )
  await activated(ctx, revised, deployment.active_revision, 'created')
  return revised
}

/** Makes an existing revision the active one; a running deployment then rolls it out. */
export async function updateActiveRevision(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  revision: unknown,
): Promise<DeploymentRow> {
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision))
    throw badRequest('invalid_active_revision', 'active_revision must be a whole number')
  if (deployment.status === 'ARCHIVED') throw wrongState(`deployment ${deployment.id} is archived`)
  if (!(await ctx.store.revision(deployment.id, revision))) throw notFound(`revision ${revision} of this deployment`)
  if (revision === deployment.active_revision) return deployment
  refuseWhileMoving(deployment)
  const changed = await ctx.store.updateDeployment(deployment.id, {active_revision: revision}, ctx.now())
  await activated(ctx, changed, deployment.active_revision, 'made active again')
  return changed
}

/** Records the change, and drops the listings not yet begun of the revision it replaces: they would list old jobs. */
async function activated(ctx: ManagerContext, deployment: DeploymentRow, previous: number, how: string) {
  const now = ctx.now()
  for (const task of await ctx.store.tasks(deployment.id, {open: true})) {
    if (task.task === 'LIST' && task.status === 'PENDING' && task.revision !== deployment.active_revision)
      await ctx.store.updateTask(
        task.id,
        {status: 'DONE', error: `cancelled: revision ${deployment.active_revision} replaces it`},
        now,
      )
  }
  await ctx.store.addEvent(
    {
      deployment: deployment.id,
      category: 'Deployment',
      type: ACTIVATED_EVENT,
      message:
        `revision ${deployment.active_revision} ${how} (was ${previous})` +
        (deployment.status === 'RUNNING' ? ': its replicas replace the running ones one by one' : ''),
      tx: null,
    },
    now,
  )
}
