/**
 * The tunnel watch, as the network's deployment manager runs it (its `docs/frps-tunnel-health.md`): an INFINITE
 * deployment's RUNNING job whose deployment proxy is unregistered `lost` is stopped after a grace (60 s by
 * default, divided by the deployment's time_scale), unless the proxy registers again inside it; the stop is then
 * the ordinary STOP task, and INFINITE lists the replacement as for any job that ended. A `graceful` unregister (an
 * operation ended, its node took the proxy down) is no fault; a service that never came up never registered, so it
 * is never lost (no time-based guessing). The grace is a STOP task due at its end, in the store: a manager killed
 * mid-grace still stops the job once it runs again, and a recovery cancels only a task not yet due.
 *
 * Its events come from the gateway's deployment proxies on the localnet (gateway/proxy-events.ts, which the
 * localnet's manager follows in process: followProxies), or, for a manager with no such stream (`deployment serve`:
 * the network's FRP server's internal address is not public), from the manager's own probe of each job's service
 * (probeTunnels), read with only the HTTP GET checks expecting 200 that frpc would run.
 */
import type {ProxyEvent, ProxyEventSource} from '../../gateway/proxy-events.js'
import type {ManagerContext} from '../context.js'
import {scaledMs} from '../strategies/durations.js'
import type {DeploymentRow, JobRow, JobTunnel, TaskRow} from '../types.js'

/** The grace between a lost proxy and its job's stop, before scaling: the network's FRPS_UNHEALTHY_GRACE_MS default. */
export const TUNNEL_GRACE_MS = 60_000

/** The event recorded when a job's proxy is lost (its stop scheduled) and when it recovers inside the grace. */
export const TUNNEL_LOST = 'FRPS_TUNNEL_LOST'
export const TUNNEL_RECOVERED = 'FRPS_TUNNEL_RECOVERED'

/** The deployment's grace, in ms: the manager's setting (TUNNEL_GRACE_MS unless set) divided by its time_scale. */
export function tunnelGraceMs(ctx: Pick<ManagerContext, 'tunnelGraceMs'>, deployment: DeploymentRow): number {
  return scaledMs(deployment, ctx.tunnelGraceMs ?? TUNNEL_GRACE_MS)
}

/** What a proxy event tells of its job, as the store keeps it; null for an event with no usable signal. */
function stateOf(event: Pick<ProxyEvent, 'type' | 'reason'>): JobTunnel | null {
  if (event.type === 'registered') return 'up'
  // An unregister without a reason (an frps older than the reasons) says nothing: the network ignores it too.
  return event.reason ?? null
}

/**
 * True for a grace STOP (a PENDING STOP not yet due and never tried): every other STOP is due when it is made (the
 * plans'), and one retried after a failure has an attempt counted.
 */
export function isGraceStop(task: TaskRow, now: number): boolean {
  return task.task === 'STOP' && task.status === 'PENDING' && task.attempts === 0 && task.due_at > now
}

/** The job's grace STOP, if one is pending. */
function graceTask(tasks: readonly TaskRow[], job: string, now: number): TaskRow | undefined {
  return tasks.find((t) => t.job === job && isGraceStop(t, now))
}

/** Applies one event of a job's deployment proxy: records its state, then schedules or cancels the grace stop. */
export async function onProxyEvent(ctx: ManagerContext, event: ProxyEvent): Promise<void> {
  const state = stateOf(event)
  if (state === null || event.deploymentId === undefined) return
  const row = await ctx.store.job(event.job)
  // Not one of this manager's jobs, or named under another deployment: nothing of its to act on.
  if (!row || row.deployment !== event.deploymentId) return
  const now = ctx.now()
  if ((row.tunnel ?? null) !== state) await ctx.store.updateJob(row.job, {tunnel: state}, now)
  if (state === 'up') return cancelGrace(ctx, row, now)
  if (state === 'lost') return scheduleGrace(ctx, row, now)
}

/** A lost proxy of a running INFINITE job: its stop at the grace's end, unless one is pending already. */
async function scheduleGrace(ctx: ManagerContext, row: JobRow, now: number): Promise<void> {
  const deployment = await ctx.store.deployment(row.deployment)
  // Only INFINITE has a replacement to hang the stop on, and only while it runs.
  if (!deployment || deployment.strategy !== 'INFINITE' || deployment.status !== 'RUNNING') return
  if (row.stop_requested || (row.state !== 'QUEUED' && row.state !== 'RUNNING')) return
  const open = await ctx.store.tasks(deployment.id, {open: true})
  // One stop per job: a burst of lost events (one per exposed port, or a snapshot replayed) schedules one.
  if (open.some((t) => t.task === 'STOP' && t.job === row.job)) return
  const grace = tunnelGraceMs(ctx, deployment)
  await ctx.store.addTask(
    {deployment: deployment.id, task: 'STOP', job: row.job, limit: null, revision: row.revision, due_at: now + grace},
    now,
  )
  await ctx.store.addEvent(
    {
      deployment: deployment.id,
      category: 'Event',
      type: TUNNEL_LOST,
      message:
        `job ${row.job} became unreachable and will be stopped and replaced in ${seconds(grace)} if it does not ` +
        'recover',
      tx: null,
    },
    now,
  )
}

/**
 * A proxy registered again: the job's grace stop, if one is pending and not yet due, is cancelled. One already
 * due is left to run (the tunnel was down for the whole grace): the worker runs only due tasks, so the two never
 * both act on one task but within a pass's few milliseconds, where the stop wins.
 */
async function cancelGrace(ctx: ManagerContext, row: JobRow, now: number): Promise<void> {
  const pending = graceTask(await ctx.store.tasks(row.deployment, {open: true}), row.job, now)
  if (!pending) return
  await ctx.store.updateTask(pending.id, {status: 'DONE', error: 'cancelled: its tunnel recovered'}, now)
  await ctx.store.addEvent(
    {
      deployment: row.deployment,
      category: 'Event',
      type: TUNNEL_RECOVERED,
      message: `job ${row.job} reconnected its network tunnel; the pending stop was cancelled`,
      tx: null,
    },
    now,
  )
}

/** A subscription of the tunnel watch to a stream of proxy events. */
export interface TunnelFollower {
  /** Unsubscribes, once the events received are applied. */
  stop(): Promise<void>
}

/** Applies a stream's events (its snapshot first), one at a time in order: each is idempotent, so replays are too. */
export function followProxies(ctx: ManagerContext, source: ProxyEventSource): TunnelFollower {
  let applied: Promise<void> = Promise.resolve()
  const unsubscribe = source.subscribe((event) => {
    applied = applied
      .then(() => onProxyEvent(ctx, event))
      .catch((error: unknown) => ctx.log(`tunnel watch: ${(error as Error).message}`))
  })
  ctx.tunnelStream = true
  return {
    async stop() {
      unsubscribe()
      ctx.tunnelStream = false
      await applied
    },
  }
}

/**
 * The tunnel watch of a manager with no stream: each job's probe (true: its service answers) turned into the
 * events the stream would have sent, from the state the store last kept of it. A job never seen up gives none
 * while it does not answer (it never came up); one seen up and no longer answering is lost; back up, registered.
 * Its node ending an operation cannot be told from outside, so no probe ever reads `graceful`.
 */
export async function probeTunnels(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  probes: ReadonlyMap<string, boolean>,
): Promise<void> {
  for (const [job, answers] of probes) {
    const row = await ctx.store.job(job)
    if (!row) continue
    const was = row.tunnel ?? null
    if (answers && was !== 'up') await onProxyEvent(ctx, proxyEvent(deployment, job, 'registered', ctx.now()))
    else if (!answers && was === 'up') await onProxyEvent(ctx, proxyEvent(deployment, job, 'unregistered', ctx.now()))
  }
}

function proxyEvent(deployment: DeploymentRow, job: string, type: ProxyEvent['type'], now: number): ProxyEvent {
  return {
    type,
    job,
    opId: '',
    port: 0,
    deploymentId: deployment.id,
    ...(type === 'unregistered' ? {reason: 'lost' as const} : {}),
    timestamp: now,
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`
}
