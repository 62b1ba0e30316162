import {type LogEntry, MAX_LINE_BYTES, MAX_LOG_BYTES, MAX_LOG_LINES} from '../results/flow-state.js'

/** The limits of one operation's log: lines and bytes kept (the oldest dropped beyond them). */
export interface LogLimits {
  lines: number
  bytes: number
}

/** Hears each line of output as it is read: its stream, its masked text (with its newline) and when (ms). */
export type LineListener = (stream: 'stdout' | 'stderr', text: string, timestamp: number) => void

/** An operation's collected output: every line kept, in order across both streams, and what the caps dropped. */
export interface CollectedLog {
  logs: LogEntry[]
  droppedLines: number
  droppedBytes: number
}

/**
 * Collects an operation's stdout and stderr as timestamped lines, in bounded memory: at most `limits.lines`
 * lines and `limits.bytes` bytes, the oldest dropped and counted. Each line's secret values (`redact`) come out
 * as `%%secrets.NAME%%`; a line is masked whole, so a value split across two chunks is still found. A run of
 * output without a newline becomes a line every MAX_LINE_BYTES.
 */
export class LogCollector {
  private readonly entries: LogEntry[] = []
  private head = 0
  private bytes = 0
  private droppedLines = 0
  private droppedBytes = 0
  private readonly pending = {stdout: Buffer.alloc(0), stderr: Buffer.alloc(0)}
  private readonly secrets: {name: string; value: string}[]

  constructor(
    private readonly limits: LogLimits = {lines: MAX_LOG_LINES, bytes: MAX_LOG_BYTES},
    redact: Readonly<Record<string, string>> = {},
    /** Told of each line as it is read, masked (the node API streams them). */
    private readonly onLine?: LineListener,
  ) {
    // Longest first, so a secret that contains another is masked whole.
    this.secrets = Object.entries(redact)
      .filter(([, value]) => value !== '')
      .map(([name, value]) => ({name, value}))
      .sort((a, b) => b.value.length - a.value.length)
  }

  /** Adds a chunk of one stream. */
  push(type: 'stdout' | 'stderr', chunk: Buffer): void {
    let buffer = this.pending[type].length > 0 ? Buffer.concat([this.pending[type], chunk]) : chunk
    for (let newline = buffer.indexOf(10); newline !== -1; newline = buffer.indexOf(10)) {
      this.add(type, buffer.subarray(0, newline + 1))
      buffer = buffer.subarray(newline + 1)
    }
    while (buffer.length >= MAX_LINE_BYTES) {
      this.add(type, buffer.subarray(0, MAX_LINE_BYTES))
      buffer = buffer.subarray(MAX_LINE_BYTES)
    }
    this.pending[type] = Buffer.from(buffer)
  }

  /** The lines so far, the unfinished last line of each stream included, and what was dropped. */
  result(): CollectedLog {
    for (const type of ['stdout', 'stderr'] as const) {
      if (this.pending[type].length > 0) this.add(type, this.pending[type])
      this.pending[type] = Buffer.alloc(0)
    }
    return {logs: this.entries.slice(this.head), droppedLines: this.droppedLines, droppedBytes: this.droppedBytes}
  }

  private add(type: 'stdout' | 'stderr', raw: Buffer): void {
    const log = this.mask(raw.toString('utf8'))
    const size = Buffer.byteLength(log)
    const now = Date.now()
    this.entries.push({type, log, timestamp: new Date(now).toISOString()})
    this.bytes += size
    this.onLine?.(type, log, now)
    while (this.entries.length - this.head > this.limits.lines || (this.bytes > this.limits.bytes && this.length > 1)) {
      const dropped = this.entries[this.head]!
      this.entries[this.head] = undefined as unknown as LogEntry
      this.head++
      this.droppedLines++
      const droppedSize = Buffer.byteLength(dropped.log)
      this.droppedBytes += droppedSize
      this.bytes -= droppedSize
    }
    // Dropped entries are compacted now and then, so the array does not keep growing.
    if (this.head > 4096 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head)
      this.head = 0
    }
  }

  private get length(): number {
    return this.entries.length - this.head
  }

  private mask(line: string): string {
    let masked = line
    for (const {name, value} of this.secrets) masked = masked.split(value).join(`%%secrets.${name}%%`)
    return masked
  }
}
