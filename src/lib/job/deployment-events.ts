/**
 * `deployment events`: a deployment's events oldest first, every page; with `follow`, the new ones as the manager
 * records them (asked every `pollMs`), until the deployment is STOPPED or ARCHIVED.
 */
import {createHash} from 'node:crypto'
import {setTimeout as sleep} from 'node:timers/promises'

import type {DeploymentClient, DeploymentEvent} from '../deployments/client.js'
import {ExitCode, GpunetError} from '../errors.js'
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
  // Stopping (Ctrl+C, or the pipe's reader gone) does not wait for the manager's answer in flight.
  const stopped = new Promise<never>((_, reject) => {
    if (options.signal?.aborted) reject(interrupted())
    options.signal?.addEventListener('abort', () => reject(interrupted()), {once: true})
  })
  stopped.catch(() => undefined)
  const unlessStopped = <T>(answer: Promise<T>): Promise<T> => Promise.race([answer, stopped])
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
  const deadline = Date.now() + options.timeoutMs
  for (;;) {
    const {status} = await client.get(id)
    options.progress?.(status)
    if (done(status)) return status
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
