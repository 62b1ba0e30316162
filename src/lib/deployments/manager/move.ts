/**
 * A deployment's move to another market (the network's `update-market`), make-before-break: the whole deployment's
 * replicas are listed on the new market beside the old ones, and only once as many new ones are ready as the
 * deployment keeps (the readiness a rollout waits for, serving.ts) are the old ones drained (draining.ts, in runStop)
 * and stopped. A new replica that ends on its own, or not enough of them ready within MOVE_DEADLINE_S (scaled), rolls
 * the move back: the new ones stopped, the old kept, an event saying why. The network's manager stops first and
 * relists; this one never leaves the service without replicas, and never half moved.
 *
 * The move is kept in the deployment's row (`move_from`, `move_began`), the rest is read from its jobs (each row
 * names its market), so a manager restarted mid-move finishes it or rolls it back from the store alone.
 *
 * A deployment with a queue timeout (`queue_placement`) moves itself: a replica QUEUED past it moves the deployment
 * to the next market that fits its need by the order of placement (market/jobs/placement.ts), one not tried before.
 */
import {readPlacementMarkets} from '../../market/jobs/placement-markets.js'
import {placeJob, type PlacementNeed} from '../../market/jobs/placement.js'
import type {ManagerContext} from '../context.js'
import {isOver} from '../strategies/index.js'
import type {DeploymentRow, JobRow} from '../types.js'
import type {RolloutStep} from './rollout.js'
import {stopJobs} from './rollout.js'
import {exposingDefinition, replicaReady} from './serving.js'

/** How long the new replicas may take to be ready before a move is rolled back, in seconds (before time_scale). */
export const MOVE_DEADLINE_S = 600

/** The events of a move, in the order they come. */
export const MOVE_EVENTS = {
  started: 'DEPLOYMENT_MOVE_STARTED',
  draining: 'DEPLOYMENT_MOVE_DRAINING',
  moved: 'DEPLOYMENT_MOVED',
  rolledBack: 'DEPLOYMENT_MOVE_ROLLED_BACK',
  ended: 'DEPLOYMENT_MOVE_ENDED',
  queueTimeout: 'QUEUE_TIMEOUT',
  noMarket: 'QUEUE_TIMEOUT_NO_MARKET',
} as const

/** What a deployment's queue timeout is kept as (its `queue_placement`, JSON). */
export interface QueuePlacement {
  /** A replica QUEUED this long (seconds, before time_scale) moves the deployment. */
  timeout_s: number
  /** The need the next market must fit (the flags' and the definition's, as placement read them at create). */
  need: PlacementNeed
  /** The markets it left or failed to move to: never chosen again. */
  tried: string[]
  /** True once no market was left to move to (said once, in an event). */
  exhausted?: boolean
}

/** The queue placement of a deployment, or null when it has none. */
export function queuePlacementOf(deployment: Pick<DeploymentRow, 'queue_placement'>): QueuePlacement | null {
  return deployment.queue_placement ? (JSON.parse(deployment.queue_placement) as QueuePlacement) : null
}

/** What a pass does of a move under way, decided from the deployment's rows alone. */
export type MoveDecision =
  /** The new replicas are listed or awaited: the strategy keeps the old ones and lists as many new. */
  | {step: 'wait'; old: JobRow[]}
  /** Enough new replicas are ready: the old ones are drained and stopped, and the move is over. */
  | {step: 'finish'; old: JobRow[]}
  /** The new replicas failed: they are stopped, the deployment goes back to the market it left. */
  | {step: 'roll-back'; fresh: JobRow[]; why: string}
  /** Nothing runs on the old market any more: the move is over. */
  | {step: 'done'}

const live = (row: JobRow) => !isOver(row.state) && !row.stop_requested

/**
 * Decides a pass of the move of `deployment` (its `move_began` set) from its job rows and which of them are ready:
 * old replicas are the live ones on another market than the deployment's, new ones those listed on it since the move
 * began.
 */
export function decideMove(
  deployment: DeploymentRow,
  rows: JobRow[],
  ready: (row: JobRow) => boolean,
  now: number,
): MoveDecision {
  const began = deployment.move_began ?? 0
  const old = rows.filter((r) => live(r) && r.market !== deployment.market)
  const fresh = rows.filter((r) => r.market === deployment.market && r.created_at >= began)
  if (old.length === 0) return {step: 'done'}
  const ended = fresh.find((r) => isOver(r.state) && !r.stop_requested)
  if (ended) return {step: 'roll-back', fresh, why: `job ${ended.job} ended on its own`}
  const readyNow = fresh.filter((r) => live(r) && ready(r)).length
  if (readyNow >= deployment.replicas) return {step: 'finish', old}
  const deadline = (MOVE_DEADLINE_S * 1000) / deployment.time_scale
  if (now - began > deadline) {
    const why = `${readyNow} of ${deployment.replicas} new replicas ready within ${Math.round(deadline / 1000)} s`
    return {step: 'roll-back', fresh, why}
  }
  return {step: 'wait', old}
}

/** Starts a move of `deployment` to `market` (its replicas listed there at the next pass); answers the row. */
export async function beginMove(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  market: string,
  why: string,
): Promise<DeploymentRow> {
  const now = ctx.now()
  const moving = await ctx.store.updateDeployment(
    deployment.id,
    {market, move_from: deployment.market, move_began: now},
    now,
  )
  await event(ctx, deployment.id, MOVE_EVENTS.started, `moving from ${deployment.market} to ${market}: ${why}`)
  return moving
}

/**
 * One pass of a move under way (or of the queue timeout that starts one): the deployment and jobs as the strategy
 * should see them. Only a RUNNING (or INSUFFICIENT_FUNDS) deployment moves; one stopping ends its move.
 */
export async function stepMove(ctx: ManagerContext, step: RolloutStep): Promise<RolloutStep> {
  const {deployment, jobs} = step
  if (!deployment.move_from) return queueTimeout(ctx, step)
  if (deployment.status !== 'RUNNING' && deployment.status !== 'INSUFFICIENT_FUNDS') {
    await endMove(ctx, deployment, MOVE_EVENTS.ended, `move ended: the deployment is ${deployment.status}`)
    return step
  }
  const rows = await ctx.store.jobs(deployment.id)
  const definition = await exposingDefinition(ctx, deployment.id, deployment.active_revision)
  const ready = new Set<string>()
  for (const row of rows)
    if (row.market === deployment.market && live(row) && (await replicaReady(ctx, deployment, row, definition)))
      ready.add(row.job)
  const decision = decideMove(deployment, rows, (r) => ready.has(r.job), ctx.now())
  switch (decision.step) {
    case 'wait':
      // As many new replicas as the deployment keeps, beside the old ones still serving.
      return {deployment: {...deployment, replicas: deployment.replicas + decision.old.length}, jobs}
    case 'finish': {
      const retiring = decision.old.map((r) => r.job)
      await event(
        ctx,
        deployment.id,
        MOVE_EVENTS.draining,
        `${ready.size} new replicas ready on ${deployment.market}: draining and stopping the ${retiring.length} on ${deployment.move_from}`,
      )
      await stopJobs(ctx, deployment, retiring)
      const moved = await endMove(
        ctx,
        deployment,
        MOVE_EVENTS.moved,
        `moved from ${deployment.move_from} to ${deployment.market}`,
      )
      const stopped = new Set(retiring)
      return {deployment: moved, jobs: jobs.map((j) => (stopped.has(j.job) ? {...j, stop_requested: true} : j))}
    }
    case 'roll-back':
      return rollBack(ctx, step, decision.fresh, decision.why)
    case 'done':
      return {
        deployment: await endMove(
          ctx,
          deployment,
          MOVE_EVENTS.moved,
          `moved from ${deployment.move_from} to ${deployment.market}`,
        ),
        jobs,
      }
  }
}

/** Back to the market the move left: the new replicas stopped, the listings still to come dropped. */
async function rollBack(ctx: ManagerContext, step: RolloutStep, fresh: JobRow[], why: string): Promise<RolloutStep> {
  const {deployment, jobs} = step
  const now = ctx.now()
  const failed = deployment.market
  const placement = queuePlacementOf(deployment)
  // A market a queue timeout moved to and that failed is not tried again.
  const tried =
    placement && !placement.tried.includes(failed) ? {...placement, tried: [...placement.tried, failed]} : null
  const back = await ctx.store.updateDeployment(
    deployment.id,
    {
      market: deployment.move_from!,
      move_from: null,
      move_began: null,
      ...(tried ? {queue_placement: JSON.stringify(tried)} : {}),
    },
    now,
  )
  const stopping = fresh.filter(live).map((r) => r.job)
  await stopJobs(ctx, deployment, stopping)
  for (const task of await ctx.store.tasks(deployment.id, {open: true}))
    if (task.task === 'LIST' && task.status === 'PENDING')
      await ctx.store.updateTask(task.id, {status: 'DONE', error: 'cancelled: the move was rolled back'}, now)
  await event(
    ctx,
    deployment.id,
    MOVE_EVENTS.rolledBack,
    `move to ${failed} rolled back to ${back.market}: ${why}; ${stopping.length} new replicas stopped, the old kept`,
  )
  const stopped = new Set(stopping)
  return {deployment: back, jobs: jobs.map((j) => (stopped.has(j.job) ? {...j, stop_requested: true} : j))}
}

async function endMove(ctx: ManagerContext, deployment: DeploymentRow, type: string, message: string) {
  const ended = await ctx.store.updateDeployment(deployment.id, {move_from: null, move_began: null}, ctx.now())
  await event(ctx, deployment.id, type, message)
  return ended
}

/** The replica that has waited QUEUED past the queue timeout (the oldest), or undefined when none has. */
export function queuedPastTimeout(
  deployment: DeploymentRow,
  rows: JobRow[],
  timeoutS: number,
  now: number,
): JobRow | undefined {
  const limit = (timeoutS * 1000) / deployment.time_scale
  return rows
    .filter((r) => live(r) && r.state === 'QUEUED' && r.market === deployment.market && now - r.created_at > limit)
    .sort((a, b) => a.created_at - b.created_at)[0]
}

/**
 * The market a queue timeout moves to: the first that fits the need by the order of placement, other than the one
 * the deployment is on and those tried before; null when none is left.
 */
export function nextMarket(placement: ReturnType<typeof placeJob>, current: string, tried: string[]): string | null {
  const passed = new Set([current, ...tried])
  return placement.markets.find((row) => row.fits && !passed.has(row.market))?.market ?? null
}

/** A RUNNING deployment with a queue timeout whose replica waits past it moves to the next market that fits. */
async function queueTimeout(ctx: ManagerContext, step: RolloutStep): Promise<RolloutStep> {
  const {deployment} = step
  const placement = queuePlacementOf(deployment)
  if (!placement || placement.exhausted || deployment.status !== 'RUNNING') return step
  const waiting = queuedPastTimeout(deployment, await ctx.store.jobs(deployment.id), placement.timeout_s, ctx.now())
  if (!waiting) return step
  const markets = await readPlacementMarkets(ctx.net)
  const to = nextMarket(placeJob(markets, placement.need, 'token'), deployment.market, placement.tried)
  const waited = Math.round((ctx.now() - waiting.created_at) / 1000)
  const why = `job ${waiting.job} waited QUEUED ${waited} s, past the queue timeout (${placement.timeout_s} s scaled by ${deployment.time_scale})`
  const tried = [...new Set([...placement.tried, deployment.market])]
  if (to === null) {
    await ctx.store.updateDeployment(
      deployment.id,
      {queue_placement: JSON.stringify({...placement, tried, exhausted: true})},
      ctx.now(),
    )
    await event(ctx, deployment.id, MOVE_EVENTS.noMarket, `${why}; no other market fits the need: it stays`)
    return step
  }
  await event(ctx, deployment.id, MOVE_EVENTS.queueTimeout, why)
  const placed = await ctx.store.updateDeployment(
    deployment.id,
    {queue_placement: JSON.stringify({...placement, tried})},
    ctx.now(),
  )
  const moving = await beginMove(ctx, placed, to, 'the queue timeout')
  return stepMove(ctx, {...step, deployment: moving})
}

async function event(ctx: ManagerContext, deployment: string, type: string, message: string) {
  await ctx.store.addEvent({deployment, category: 'Deployment', type, message, tx: null}, ctx.now())
}
