/**
 * The quotes of a session, checked by gpunet rather than left to the model: a call that pays or destroys first
 * answers a quote bound to its tool, its exact arguments and its price; it acts only when called again with that
 * quote's id, within 5 minutes, once. The session's caps (`--max-spend` in tokens, `--max-credits`) and the
 * duplicate guard (the same definition posted twice within 10 minutes) are held here too.
 */
import {createHash, randomUUID} from 'node:crypto'

/** How long a quote may be redeemed. */
export const QUOTE_TTL_MS = 5 * 60 * 1000
/** How long the same definition may not be posted again without `allowDuplicate`. */
export const DUPLICATE_WINDOW_MS = 10 * 60 * 1000

/** What a call costs: tokens and credits against the caps, SOL (fees and rent) on its own line. */
export interface Cost {
  /** Payment tokens from the wallet; null when gpunet cannot price the call before it acts. */
  tokens: number | null
  /** SOL for fees and rent; null when not known before it acts. */
  sol: number | null
  credits: number | null
}

/** The quote a call answers first. */
export interface Quote {
  id: string
  tool: string
  /** What the call does, as the CLI would run it. */
  action: string
  network: string
  cost: Cost
  /** Who pays: the wallet's address, a deployment's vault, or nothing. */
  from: string
  expiresAt: string
}

/** A refusal of the quote flow: a tool result with isError and this error document. */
export interface Refusal {
  error: {code: string; message: string; hint?: string}
}

interface Held {
  quote: Quote
  binding: string
  expires: number
  used: boolean
}

/** The canonical text of a call's arguments: keys sorted at every depth, so member order does not matter. */
export function bindingOf(tool: string, args: unknown, extra: unknown = null): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
          )
        : value
  return createHash('sha256')
    .update(JSON.stringify([tool, canonical(args), canonical(extra)]))
    .digest('hex')
}

export interface QuoteBookOptions {
  /** Most payment tokens the session may spend (`--max-spend`). */
  maxSpend?: number
  /** Most credits the session may spend (`--max-credits`). */
  maxCredits?: number
  now?: () => number
}

/** The session's quotes, what it spent and the definitions it posted. */
export class QuoteBook {
  private readonly quotes = new Map<string, Held>()
  private readonly posted = new Map<string, number>()
  readonly spent = {tokens: 0, sol: 0, credits: 0}
  private readonly now: () => number

  constructor(private readonly options: QuoteBookOptions = {}) {
    this.now = options.now ?? Date.now
  }

  /** The refusal of a cost the caps do not allow, or null. */
  overCap(cost: Cost): Refusal | null {
    const {maxSpend, maxCredits} = this.options
    if (maxSpend !== undefined) {
      if (cost.tokens === null) {
        return refusal(
          'unpriced',
          'gpunet cannot price this call before it acts, and this session caps what it spends (--max-spend)',
          'run it from the CLI, or start the session without --max-spend',
        )
      }
      if (this.spent.tokens + cost.tokens > maxSpend + 1e-9) {
        return refusal(
          'over_cap',
          `this call costs ${cost.tokens} tokens; the session spent ${this.spent.tokens} of the ${maxSpend} it may (--max-spend)`,
          'nothing was paid; a new session with a larger --max-spend can',
        )
      }
    }
    if (maxCredits !== undefined && cost.credits !== 0) {
      if (cost.credits === null) {
        return refusal(
          'unpriced',
          'gpunet cannot price this call in credits before it acts, and this session caps credits (--max-credits)',
        )
      }
      if (this.spent.credits + cost.credits > maxCredits + 1e-9) {
        return refusal(
          'over_cap',
          `this call costs ${cost.credits} credits; the session spent ${this.spent.credits} of the ${maxCredits} it may (--max-credits)`,
          'nothing was paid',
        )
      }
    }
    return null
  }

  /** Holds a new quote for a call (its binding: tool, arguments and price). */
  issue(quote: Omit<Quote, 'id' | 'expiresAt'>, binding: string): Quote {
    const expires = this.now() + QUOTE_TTL_MS
    const held: Quote = {...quote, id: randomUUID(), expiresAt: new Date(expires).toISOString()}
    this.quotes.set(held.id, {quote: held, binding, expires, used: false})
    return held
  }

  /** The quote a call redeems, or why it may not act. A quote is spent by a call that acts, whatever its end. */
  redeem(id: string, tool: string, binding: string): Quote | Refusal {
    const held = this.quotes.get(id)
    if (!held) return refusal('quote_unknown', 'no such quote in this session', 'call it without "quote" to get one')
    if (held.quote.tool !== tool) {
      return refusal(
        'quote_other_call',
        `the quote is for ${held.quote.tool}, not ${tool}`,
        'get a quote for this call',
      )
    }
    if (held.used) return refusal('quote_used', 'the quote was used already', 'get a new quote')
    if (this.now() > held.expires)
      return refusal('quote_expired', 'the quote expired (quotes last 5 minutes)', 'get a new quote')
    if (held.binding !== binding) {
      return refusal(
        'quote_arguments_changed',
        'the call differs from the one quoted (its arguments, its definition or its price)',
        'get a quote for these arguments',
      )
    }
    held.used = true
    return held.quote
  }

  /** Counts what an acting call spent. */
  charge(cost: Cost): void {
    this.spent.tokens += cost.tokens ?? 0
    this.spent.sol += cost.sol ?? 0
    this.spent.credits += cost.credits ?? 0
  }

  /** Gives back what `charge` counted, for a call that sent nothing. */
  refund(cost: Cost): void {
    this.spent.tokens -= cost.tokens ?? 0
    this.spent.sol -= cost.sol ?? 0
    this.spent.credits -= cost.credits ?? 0
  }

  /** The refusal of a definition this session posted in the last 10 minutes, or null. */
  duplicate(definitionHash: string): Refusal | null {
    const at = this.posted.get(definitionHash)
    if (at === undefined || this.now() - at > DUPLICATE_WINDOW_MS) return null
    return refusal(
      'duplicate_post',
      `this session posted the same definition ${Math.round((this.now() - at) / 1000)} s ago`,
      'give "allowDuplicate": true to post it again',
    )
  }

  /** Records a post now; returns the time of the one before it (for `forgetPost`). */
  recordPost(definitionHash: string): number | undefined {
    const before = this.posted.get(definitionHash)
    this.posted.set(definitionHash, this.now())
    return before
  }

  /** Takes back a post that sent nothing: the one before it, if any, stands again. */
  forgetPost(definitionHash: string, before: number | undefined): void {
    if (before === undefined) this.posted.delete(definitionHash)
    else this.posted.set(definitionHash, before)
  }
}

export function refusal(code: string, message: string, hint?: string): Refusal {
  return {error: {code, message, ...(hint ? {hint} : {})}}
}

export function isRefusal(value: Quote | Refusal): value is Refusal {
  return 'error' in value
}
