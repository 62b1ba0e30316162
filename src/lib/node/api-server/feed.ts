/**
 * What the node API streams of a job: its lines (`/flog` and `/log` entries) and its states (`/status`), kept as
 * bounded history and handed to followers as they come. Every entry is numbered within its job (`seq`): the
 * localnet's frames carry the number, so a client that reconnects drops what the history replays.
 */
import {MAX_LOG_BYTES, MAX_LOG_LINES, type FlowState} from '../../results/flow-state.js'
import type {FlogEntry, NodeLogEntry, StatusEntry} from '../../node-api/protocol.js'

/** Lines of history kept per operation, as the network's nodes keep (the oldest dropped). */
export const MAX_HISTORY_LINES_PER_OP = MAX_LOG_LINES
/** Bytes of line text kept per operation. */
export const MAX_HISTORY_BYTES_PER_OP = MAX_LOG_BYTES
/** The node's own lines and states kept per job. */
export const MAX_SYSTEM_ENTRIES = 2000
/** Followers of one job at once; more are refused (close 1013) until one leaves. */
export const MAX_FOLLOWERS_PER_JOB = 64
/** Followers of a job that ended are let go this long after (the client stops on the job's state on chain). */
export const ENDED_FOLLOW_GRACE_MS = 60_000
/** Jobs that ended whose history is kept for late followers (the most recent ones). */
export const ENDED_FEEDS_KEPT = 8
/**
 * Bytes of history handed to a new follower before the loop is yielded to: a 16 MiB history sent at once held
 * the whole localnet 1.5 s.
 */
export const REPLAY_CHUNK_BYTES = 256 * 1024

/** One streamed entry: the `/flog` form, and the `/log` form for lines a `/log` follower sees. */
export interface FeedEntry {
  seq: number
  flog: FlogEntry
  log: NodeLogEntry | null
}

/** A follower: what it wants, and how it is handed an entry (false: it cannot keep up, and is dropped). */
export interface Follower {
  kind: 'flog' | 'log' | 'status'
  matches(entry: FeedEntry): boolean
  deliver(entry: FeedEntry | StatusEntry): boolean
  /** Called when the follower is dropped by the feed (too slow, or the feed is gone). */
  drop(reason: 'slow' | 'gone'): void
}

/** An operation's state as `/job/<job>/info` shows it (the flow state's op state, without its logs). */
export interface OpInfo {
  operationId: string
  group: string
  status: 'running' | 'success' | 'failed' | 'stopped'
  startTime: number
  endTime: number | null
  exitCode: number | null
}

interface Ring {
  entries: FeedEntry[]
  head: number
  bytes: number
}

/** One job's history and followers. */
export class JobFeed {
  private seq = 0
  private lastTimestamp = 0
  private statusIndex = 0
  private readonly rings = new Map<string, Ring>()
  private readonly statuses: StatusEntry[] = []
  private readonly followers = new Set<Follower>()
  /** Followers still being handed their history: what is left of it, then what came meanwhile, in order. */
  private readonly replays = new Map<Follower, {entries: (FeedEntry | StatusEntry)[]; at: number}>()
  private readonly listeners = new Set<() => void>()
  readonly ops: OpInfo[] = []
  readonly startTime = Date.now()
  /** The flow state the node recorded, once the job ended on it. */
  result: FlowState | null = null

  constructor(readonly job: string) {}

  get ended(): boolean {
    return this.result !== null
  }

  /** A line of an operation's output, as the runtime read it (secrets masked, without its newline). */
  line(opId: string, stream: 'stdout' | 'stderr', text: string, timestamp = Date.now()): void {
    const time = this.nextTimestamp(timestamp)
    const seq = ++this.seq
    this.add(opId, {
      seq,
      flog: {opId, group: this.groupOf(opId), type: 'container', timestamp: time, message: text, seq, stream},
      // The network's nodes keep each line's newline in `/log` (not in `/flog`): clients that print it as it comes
      // (the network's CLI) rely on it.
      log: {log: `${text}\n`, method: 'NodeRepository.displayLog', type: 'log', timestamp: time, job: this.job, seq},
    })
  }

  /** A line of the node's own (`opId: "system"`): what it does with the job, or why it failed. */
  notice(type: 'info' | 'error', text: string): void {
    const time = this.nextTimestamp(Date.now())
    const seq = ++this.seq
    this.add('system', {
      seq,
      flog: {opId: 'system', group: 'system', type, timestamp: time, message: text, seq},
      log: {
        log: text,
        method: 'NodeAgent',
        type: type === 'error' ? 'error' : 'info',
        timestamp: time,
        job: this.job,
        seq,
      },
    })
  }

  /** A change of the job's state, for `/status` followers and `/job/<job>/info`. */
  status(status: string, state: Record<string, string> = {}): void {
    const entry: StatusEntry = {
      status,
      state: {job: this.job, ...state},
      timestamp: Date.now(),
      index: this.statusIndex++,
    }
    this.statuses.push(entry)
    if (this.statuses.length > MAX_SYSTEM_ENTRIES) this.statuses.shift()
    for (const follower of this.followers) if (follower.kind === 'status') this.handLive(follower, entry)
    this.changed()
  }

  /** The execution group of an operation that started (its own id until then). */
  private groupOf(operationId: string): string {
    return this.ops.findLast((o) => o.operationId === operationId)?.group ?? operationId
  }

  /** An operation started, in its execution group (a group of its own by default). */
  opStarted(operationId: string, group = operationId): void {
    this.ops.push({
      operationId,
      group,
      status: 'running',
      startTime: Date.now(),
      endTime: null,
      exitCode: null,
    })
    this.status('running', {op: operationId})
  }

  /** An operation ended. */
  opEnded(operationId: string, exitCode: number, status: OpInfo['status']): void {
    const op = this.ops.findLast((o) => o.operationId === operationId)
    if (op) Object.assign(op, {endTime: Date.now(), exitCode, status})
    this.status(status, {op: operationId, exitCode: String(exitCode)})
  }

  /** The job ended on this node with `result` recorded (or not: it is still what the node made of it). */
  end(result: FlowState): void {
    this.result = result
    this.status(result.status)
    setTimeout(() => this.release(), ENDED_FOLLOW_GRACE_MS).unref()
  }

  /**
   * Adds a follower: the history it asks for first, then what comes. The history goes in chunks of
   * REPLAY_CHUNK_BYTES with the loop yielded to between them (what comes meanwhile waits behind it). Returns
   * false (and adds nothing) when the job has MAX_FOLLOWERS_PER_JOB already.
   */
  follow(follower: Follower): boolean {
    if (this.followers.size >= MAX_FOLLOWERS_PER_JOB) return false
    this.followers.add(follower)
    const history = follower.kind === 'status' ? [...this.statuses] : this.history(follower)
    this.replays.set(follower, {entries: history, at: 0})
    this.replay(follower)
    return true
  }

  unfollow(follower: Follower): void {
    this.followers.delete(follower)
    this.replays.delete(follower)
  }

  /** Hands the follower the next chunk of its replay, and schedules the one after. */
  private replay(follower: Follower): void {
    const replay = this.replays.get(follower)
    if (!replay) return
    let bytes = 0
    while (replay.at < replay.entries.length && bytes < REPLAY_CHUNK_BYTES) {
      const entry = replay.entries[replay.at++]!
      bytes += 'seq' in entry ? textBytes(entry) : 64
      if (!this.hand(follower, entry)) return void this.replays.delete(follower)
    }
    if (replay.at < replay.entries.length) setImmediate(() => this.replay(follower))
    else this.replays.delete(follower)
  }

  /** Hands a new entry to a follower, or queues it behind the history it is still being handed. */
  private handLive(follower: Follower, entry: FeedEntry | StatusEntry): void {
    const replay = this.replays.get(follower)
    if (replay) replay.entries.push(entry)
    else this.hand(follower, entry)
  }

  /** Drops every follower (the feed is gone). */
  close(): void {
    this.release()
    this.listeners.clear()
  }

  private release(): void {
    for (const follower of this.followers) follower.drop('gone')
    this.followers.clear()
    this.replays.clear()
  }

  /** Calls `listener` after each change of state; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private history(follower: Follower): FeedEntry[] {
    const entries: FeedEntry[] = []
    for (const ring of this.rings.values()) {
      for (let i = ring.head; i < ring.entries.length; i++) {
        const entry = ring.entries[i]!
        if (follower.matches(entry)) entries.push(entry)
      }
    }
    return entries.sort((a, b) => a.seq - b.seq)
  }

  private add(ring: string, entry: FeedEntry): void {
    let kept = this.rings.get(ring)
    if (!kept) this.rings.set(ring, (kept = {entries: [], head: 0, bytes: 0}))
    kept.entries.push(entry)
    kept.bytes += textBytes(entry)
    const maxLines = ring === 'system' ? MAX_SYSTEM_ENTRIES : MAX_HISTORY_LINES_PER_OP
    while (
      kept.entries.length - kept.head > maxLines ||
      (kept.bytes > MAX_HISTORY_BYTES_PER_OP && kept.entries.length - kept.head > 1)
    ) {
      kept.bytes -= textBytes(kept.entries[kept.head]!)
      kept.entries[kept.head++] = undefined as unknown as FeedEntry
    }
    if (kept.head > 4096 && kept.head * 2 > kept.entries.length) {
      kept.entries.splice(0, kept.head)
      kept.head = 0
    }
    for (const follower of this.followers)
      if (follower.kind !== 'status' && follower.matches(entry)) this.handLive(follower, entry)
  }

  private hand(follower: Follower, entry: FeedEntry | StatusEntry): boolean {
    if (follower.deliver(entry)) return true
    this.followers.delete(follower)
    this.replays.delete(follower)
    follower.drop('slow')
    return false
  }

  /** Strictly increasing per job, as the network's nodes make them (a client may dedupe on it). */
  private nextTimestamp(now: number): number {
    this.lastTimestamp = Math.max(now, this.lastTimestamp + 1)
    return this.lastTimestamp
  }

  private changed(): void {
    for (const listener of this.listeners) listener()
  }
}

function textBytes(entry: FeedEntry): number {
  const {message} = entry.flog
  return typeof message === 'string' ? Buffer.byteLength(message) : 64
}

/** The feeds of the jobs a node runs, and of the last few it ran. */
export class FeedRegistry {
  private readonly feeds = new Map<string, JobFeed>()

  /** A new feed for a job the node takes (replacing an old one of the same job). */
  open(job: string): JobFeed {
    this.feeds.get(job)?.close()
    this.feeds.delete(job)
    const feed = new JobFeed(job)
    this.feeds.set(job, feed)
    const ended = [...this.feeds.values()].filter((f) => f.ended)
    // The oldest ended feeds go first; running ones are never dropped.
    for (const old of ended.slice(0, Math.max(0, ended.length - ENDED_FEEDS_KEPT))) {
      old.close()
      this.feeds.delete(old.job)
    }
    return feed
  }

  get(job: string): JobFeed | undefined {
    return this.feeds.get(job)
  }

  close(): void {
    for (const feed of this.feeds.values()) feed.close()
    this.feeds.clear()
  }
}
