/**
 * Revisions: a new job definition for a running deployment (the network's `create-revision`), or an earlier one made
 * active again (`update-active-revision`). The definition is checked as `create` checks it; the rollout that
 * follows (rollout.ts) replaces the replicas one by one.
 */
import {checkPostableText} from '../../definition/upload.js'
import {computeCidV0} from '../../ipfs/cid.js'
import {badRequest, notFound, wrongState} from '../../http/api-error.js'
import type {ManagerContext} from '../context.js'
import type {DeploymentRow} from '../types.js'

/** The event that starts a rollout: its time is when the rollout began (rollout.ts reads it). */
export const ACTIVATED_EVENT = 'REVISION_ACTIVATED'

/**
 * Checks a definition as `job post` does (400, nothing changed, when refused), uploads it, and answers its CID and
 * the document as stored.
 */
export async function uploadDefinition(
  ctx: ManagerContext,
  definition: unknown,
  nothing: string,
): Promise<{cid: string; text: string}> {
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition))
    throw badRequest('invalid_job_definition', `job_definition must be a job definition object; ${nothing}`)
  const text = JSON.stringify(definition)
  const {upload} = await checkPostableText(
    text,
    'job_definition',
    ctx.network,
    `check it with \`gpunet job validate --network ${ctx.network}\`; ${nothing}`,
  )
  const {cid} = computeCidV0(upload.bytes)
  await ctx.net.content().add(upload.bytes)
  return {cid, text}
}

/** Adds a revision of `definition` and makes it active; a running deployment then rolls it out. */
export async function createRevision(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  definition: unknown,
): Promise<DeploymentRow> {
  if (deployment.status === 'ARCHIVED') throw wrongState(`deployment ${deployment.id} is archived`)
  const {cid, text} = await uploadDefinition(ctx, definition, 'nothing was changed')
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
