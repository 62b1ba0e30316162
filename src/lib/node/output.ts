/** Bytes kept of each of an operation's stdout and stderr unless the caller says otherwise. */
export const DEFAULT_OUTPUT_LIMIT = 64 * 1024

/** A captured stream: the text kept (secrets masked) and how many bytes were cut from its middle. */
export interface CapturedOutput {
  text: string
  cutBytes: number
}

interface Occurrence {
  start: number
  end: number
  name: string
}

/**
 * Collects one output stream in bounded memory: its first and last `limit / 2` bytes, with a marker where the
 * middle was cut. Secret values in `redact` come out as `%%secrets.NAME%%`. Each end keeps a margin as long
 * as the longest secret, so a value that straddles a cut is still found whole and masked rather than left
 * half visible.
 */
export class OutputCollector {
  private readonly head: Buffer[] = []
  private headBytes = 0
  private tail: Buffer = Buffer.alloc(0)
  private total = 0
  private readonly headLimit: number
  private readonly tailLimit: number
  private readonly margin: number
  private readonly secrets: {name: string; value: Buffer}[]

  constructor(limit = DEFAULT_OUTPUT_LIMIT, redact: Readonly<Record<string, string>> = {}) {
    this.headLimit = Math.ceil(limit / 2)
    this.tailLimit = Math.floor(limit / 2)
    this.secrets = Object.entries(redact)
      .filter(([, value]) => value !== '')
      .map(([name, value]) => ({name, value: Buffer.from(value)}))
    this.margin = Math.max(0, ...this.secrets.map((s) => s.value.length))
  }

  /** Adds a chunk of the stream. */
  push(chunk: Buffer): void {
    this.total += chunk.length
    const headRoom = this.headLimit + this.margin - this.headBytes
    if (headRoom > 0) {
      this.head.push(chunk.subarray(0, headRoom))
      this.headBytes += Math.min(headRoom, chunk.length)
    }
    const keep = this.tailLimit + this.margin
    this.tail = Buffer.concat([this.tail, chunk.subarray(Math.max(0, chunk.length - keep))])
    if (this.tail.length > keep) this.tail = this.tail.subarray(this.tail.length - keep)
  }

  /** The text kept so far and how much was cut. */
  result(): CapturedOutput {
    const head = Buffer.concat(this.head)
    if (this.total <= this.headLimit + this.tailLimit) {
      const whole = Buffer.concat([head, this.tail.subarray(this.tail.length - (this.total - head.length))])
      return {text: this.render(whole, 0, whole.length), cutBytes: 0}
    }
    const tailStart = this.tail.length - this.tailLimit
    const cutBytes = this.total - this.headLimit - this.tailLimit
    const marker = `\n[... ${cutBytes} bytes cut ...]\n`
    return {
      text: this.render(head, 0, this.headLimit) + marker + this.render(this.tail, tailStart, this.tail.length),
      cutBytes,
    }
  }

  private find(buffer: Buffer): Occurrence[] {
    const found: Occurrence[] = []
    for (const {name, value} of this.secrets) {
      for (let at = buffer.indexOf(value); at !== -1; at = buffer.indexOf(value, at + 1)) {
        found.push({start: at, end: at + value.length, name})
      }
    }
    // Longest first where two start together, so a secret that contains another is masked whole.
    return found.sort((a, b) => a.start - b.start || b.end - a.end)
  }

  private render(buffer: Buffer, from: number, to: number): string {
    let text = ''
    let at = from
    for (const o of this.find(buffer)) {
      // A value crossing the edge of the range is masked too: half a secret is still a secret.
      if (o.end <= at || o.start >= to) continue
      if (o.start >= at || at === from) {
        text += buffer.subarray(at, Math.max(at, o.start)).toString('utf8') + `%%secrets.${o.name}%%`
      }
      at = Math.min(o.end, to)
    }
    return text + buffer.subarray(at, to).toString('utf8')
  }
}
