/**
 * `deployment events`: a deployment's events oldest first, every page; with `follow`, the new ones as the manager
 * records them (asked every `pollMs`), until the deployment is STOPPED or ARCHIVED.
 */
import {createHash} from 'node:crypto'
import {setTimeout as sleep} from 'node:timers/promises'

import type {Deployment, DeploymentClient, DeploymentEvent} from '../deployments/client/client.js'
import {ExitCode, type ExitCodeValue, GpunetError} from '../errors.js'
import {stopExitCode} from './stop-signals.js'

/** Following ends once the deployment is in one of these states and its last events were read. */
const FINAL = new Set(['STOPPED', 'ARCHIVED'])

/** The most pages one read takes (100 events each): a manager whose cursors never end cannot hold gpunet. */
const MAX_PAGES = 1000

/**
 * How many events of the latest instant are remembered (as 32-byte digests) to print each once: a manager
 * flooding one instant with new events cannot grow gpunet's memory past about a megabyte. An honest manager
 * records far fewer at one millisecond; past this many, the oldest of that instant may print again.
 */
export const SEEN_EVENTS = 10_000

/** The last `max` keys added, in order of arrival: a bounded window of what was seen. */
class SeenWindow {
  private readonly keys = new Set<string>()

  constructor(private readonly max: number) {}

  has(key: string): boolean {
    return this.keys.has(key)
  }

  add(key: string): void {
    this.keys.add(key)
    // A Set iterates in insertion order: its first key is the oldest.
    if (this.keys.size > this.max) this.keys.delete(this.keys.values().next().value as string)
  }
}

/** An event's identity: what tells two events of one instant apart, digested to a fixed size. */
function eventKey(event: DeploymentEvent): string {
  const text = JSON.stringify([event.created_at, event.type, event.message, event.tx ?? null])
  return createHash('sha256').update(text).digest('base64')
}

export interface EventsOptions {
  follow: boolean
  /** One event; a returned promise holds the reading until it settles (stdout full). */
  event: (event: DeploymentEvent) => void | Promise<void>
  signal?: AbortSignal
  /** How often the manager is asked while following (default 2 s). */
  pollMs?: number
}

/** Prints a deployment's events (see the module comment); returns how many. */
export async function deploymentEvents(
  client: DeploymentClient,
  id: string,
  options: EventsOptions,
): Promise<{events: number; status: string | null}> {
  // Events of one instant are told apart by their content: the next read from that instant on repeats them.
  let since: string | undefined
  let atSince = new SeenWindow(SEEN_EVENTS)
  let count = 0
  const interrupted = () =>
    new GpunetError('events_interrupted', 'Stopped following the events; the deployment goes on.', {
      exitCode: stopExitCode(options.signal),
    })
  // Stopping (Ctrl+C, or the pipe's reader gone) does not wait for the manager's answer in flight. One listener per
  // answer, removed once it settles: a reaction left on a lasting promise would keep every page alive.
  const unlessStopped = <T>(answer: Promise<T>): Promise<T> => {
    const signal = options.signal
    if (!signal) return answer
    if (signal.aborted) return Promise.reject(interrupted())
    return new Promise<T>((resolve, reject) => {
      const abort = () => reject(interrupted())
      signal.addEventListener('abort', abort, {once: true})
      answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
    })
  }
  for (;;) {
    // The state first: events recorded before a final state are all read below before following stops.
    const status = options.follow ? (await unlessStopped(client.get(id))).status : null
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await unlessStopped(
        client.events(id, {sort_order: 'asc', limit: 100, cursor, created_after: since}),
      )
      for (const event of answer.events) {
        if (options.signal?.aborted) throw interrupted()
        if (since !== undefined && event.created_at < since) continue
        const key = eventKey(event)
        if (event.created_at === since && atSince.has(key)) continue
        if (event.created_at !== since) {
          since = event.created_at
          atSince = new SeenWindow(SEEN_EVENTS)
        }
        atSince.add(key)
        count++
        await options.event(event)
      }
      cursor = answer.pagination.cursor_next ?? undefined
      if (!cursor) break
    }
    if (!options.follow || (status !== null && FINAL.has(status))) return {events: count, status}
    try {
      await sleep(options.pollMs ?? 2000, undefined, {signal: options.signal})
    } catch {
      throw interrupted()
    }
  }
}

/** The progress `waitForStatus` reports, and when it gives up. */
export interface StatusWaitOptions {
  /** The deployment's state as last read, each time it is read. */
  progress?: (status: string) => void
  timeoutMs: number
  pollMs?: number
  signal?: AbortSignal
}

/**
 * Reads the deployment until `done` holds for its state (`deployment stop` waits for STOPPED): exit 124 after
 * `timeoutMs`, 130/143/129 when interrupted (the deployment goes on either way).
 */
export async function waitForStatus(
  client: DeploymentClient,
  id: string,
  done: (status: string) => boolean,
  options: StatusWaitOptions,
): Promise<string> {
  return waitForDeployment(client, id, async ({status}) => (done(status) ? status : null), options)
}

/**
 * The one wait on a deployment: reads it every `pollMs` and asks `check`, which answers what ends the wait, null
 * to go on, or throws to fail it; exit 124 after `timeoutMs`, 130/143/129 when interrupted (the deployment goes on
 * either way). `deployment stop`, and `start --wait` and `revise --wait` (waitUntilServing) wait through it.
 */
export async function waitForDeployment<T>(
  client: DeploymentClient,
  id: string,
  check: (deployment: Deployment) => Promise<T | null>,
  options: StatusWaitOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs
  for (;;) {
    const deployment = await client.get(id)
    const {status} = deployment
    options.progress?.(status)
    const done = await check(deployment)
    if (done !== null) return done
    if (Date.now() >= deadline) {
      throw new GpunetError('wait_timeout', `deployment ${id} is still ${status} after ${options.timeoutMs / 1000} s`, {
        exitCode: ExitCode.TIMEOUT,
        hint: `its manager goes on: \`gpunet deployment get ${id}\` shows when it is done`,
        fields: {deployment: id, status},
      })
    }
    try {
      await sleep(options.pollMs ?? 1000, undefined, {signal: options.signal})
    } catch {
      throw new GpunetError(
        'wait_interrupted',
        `Stopped waiting; deployment ${id} is ${status} and its manager goes on.`,
        {
          exitCode: stopExitCode(options.signal),
          fields: {deployment: id, status},
        },
      )
    }
  }
}

/** What `--wait` of `deployment start` and `revise` saw: the deployment serving, with how many replicas ready. */
export interface Serving {
  deployment: Deployment
  ready: number
}

/** How a wait for a revision's rollout knows it: the revision, and the newest event before it was made. */
export interface RevisionWatch {
  revision: number
  /** `created_at` of the newest event before the revision; undefined when it had none. */
  after?: string
}

/** The newest event's time (a revise's `--wait` reads only what comes after it). */
export async function latestEventTime(client: DeploymentClient, id: string): Promise<string | undefined> {
  const {events} = await client.events(id, {sort_order: 'desc', limit: 10})
  return events[0]?.created_at
}

/** States a deployment that was to serve ended in, with the exit each is. */
const ENDED: Record<string, {code: string; exitCode: ExitCodeValue; why: string; hint: (id: string) => string}> = {
  ERROR: {
    code: 'deployment_failed',
    exitCode: ExitCode.JOB_FAILED,
    why: 'failed (ERROR)',
    hint: (id) => `its events say why: gpunet deployment events ${id}`,
  },
  INSUFFICIENT_FUNDS: {
    code: 'insufficient_funds',
    exitCode: ExitCode.INSUFFICIENT_BALANCE,
    why: 'ran short of funds (INSUFFICIENT_FUNDS)',
    hint: (id) =>
      `fund its vault, then start it again: gpunet deployment fund ${id} --tokens 10 && gpunet deployment start ${id}`,
  },
  STOPPING: {
    code: 'deployment_stopped',
    exitCode: ExitCode.JOB_STOPPED,
    why: 'was stopped (STOPPING)',
    hint: (id) => `gpunet deployment events ${id} shows who stopped it`,
  },
  STOPPED: {
    code: 'deployment_stopped',
    exitCode: ExitCode.JOB_STOPPED,
    why: 'was stopped (STOPPED)',
    hint: (id) => `gpunet deployment events ${id} shows who stopped it`,
  },
  ARCHIVED: {
    code: 'deployment_stopped',
    exitCode: ExitCode.JOB_STOPPED,
    why: 'was archived',
    hint: () => 'an archived deployment runs nothing more',
  },
}

/**
 * Waits until the deployment is RUNNING with every replica ready: as many RUNNING jobs (with `revision`, of it: a
 * manager that does not say each job's revision is believed by its REVISION_ROLLED_OUT alone) as it keeps replicas, and each endpoint the manager sees online. Fails with the state it
 * ended in instead (ERROR 8, INSUFFICIENT_FUNDS 4, stopped 9); with `revision`, a rollback of it is exit 8, and its
 * REVISION_ROLLED_OUT event ends the wait as well.
 */
export async function waitUntilServing(
  client: DeploymentClient,
  id: string,
  options: StatusWaitOptions & {revision?: RevisionWatch},
): Promise<Serving> {
  const watch = options.revision
  let since = watch?.after
  let rolledOut = false
  return waitForDeployment(
    client,
    id,
    async (deployment) => {
      const ended = ENDED[deployment.status]
      if (ended) {
        throw new GpunetError(ended.code, `deployment ${id} ${ended.why} before it served`, {
          exitCode: ended.exitCode,
          hint: ended.hint(id),
          fields: {deployment: id, status: deployment.status},
        })
      }
      if (watch) {
        for (;;) {
          const page = await client.events(id, {sort_order: 'asc', limit: 100, created_after: since})
          const fresh = page.events.filter((e) => since === undefined || e.created_at > since)
          for (const event of fresh) {
            const ofIt = event.message.startsWith(`revision ${watch.revision} `)
            if (event.type === 'REVISION_ROLLED_BACK' && ofIt) throw rolledBack(id, watch.revision, event.message)
            if (event.type === 'REVISION_ROLLED_OUT' && ofIt) rolledOut = true
          }
          if (fresh.length === 0) break
          since = fresh.at(-1)!.created_at
          if (!page.pagination.cursor_next) break
        }
        // A manager whose events say it otherwise: the revision is no longer the active one.
        if (deployment.active_revision !== undefined && deployment.active_revision < watch.revision) {
          throw rolledBack(id, watch.revision, `revision ${deployment.active_revision} is active again`)
        }
      }
      if (deployment.status !== 'RUNNING') return null
      const {jobs} = await client.jobs(id, {limit: 100, sort_order: 'desc'})
      const ready = jobs.filter((job) => job.state === 'RUNNING' && (!watch || job.revision === watch.revision)).length
      const online = (deployment.endpoints ?? []).every((endpoint) => endpoint.online !== false)
      if ((ready >= deployment.replicas && online) || rolledOut) return {deployment, ready}
      return null
    },
    options,
  )
}

function rolledBack(id: string, revision: number, said: string): GpunetError {
  return new GpunetError('revision_rolled_back', `revision ${revision} of deployment ${id} was rolled back: ${said}`, {
    exitCode: ExitCode.JOB_FAILED,
    hint: `the replicas that ran before keep serving; its events and the new replicas' logs say why: gpunet deployment events ${id}`,
    fields: {deployment: id, revision},
  })
}
