/**
 * One parser per kind of value a setting takes. The resolver (settings.ts), `gpunet config set`
 * (config-settings.ts) and the setting flags (src/cli/flags.ts) all read a value through its kind here, so a
 * spelling is accepted everywhere or nowhere (`priorityFee=yes` once passed the resolver and failed `config set`).
 * Each kind reads text into a value and writes a value back as the text `config set` stores, which reads back the
 * same. This module stays at the bottom of lib/ (errors, text/ and network.ts only): every layer imports it.
 */
import {isAbsolute, resolve} from 'node:path'

import {isGpunetError} from '../errors.js'
import {NETWORKS} from '../network.js'
import {formatAmount, parseAmount} from '../text/amounts.js'
import {decodeBase58} from '../text/base58-text.js'
import {durationMs} from '../text/durations.js'
import bs58 from 'bs58'

/** What a text gives: its value, or why it gives none (a phrase after "must be …", "not …"). */
export type Reading<T> = {value: T} | {why: string}

/** A kind of value: how text reads into it and how a value is written back. */
export interface Kind<T> {
  /** What a value of the kind is, after "must be": `true or false`. */
  readonly describe: string
  /** The value a text gives; `cwd` is what a relative path is taken from. */
  read(text: string, cwd: string): Reading<T>
  /** The text a value is stored as, which `read` takes back to the same value. */
  write(value: T): string
}

/** The addresses a new localnet chain is created with (localnet/ids.ts gives their keys). */
export const LOCALNET_IDS = ['own', 'devnet', 'mainnet'] as const
export type LocalnetIds = (typeof LOCALNET_IDS)[number]

/** How a localnet's node runs jobs: podman when it works (else host processes if allowed), podman only, or host. */
export const RUNTIME_CHOICES = ['auto', 'podman', 'host'] as const
export type RuntimeChoice = (typeof RUNTIME_CHOICES)[number]

/** When a localnet's node pulls a job's image (podman's own `--pull` policies). */
export const PULL_POLICIES = ['missing', 'always', 'never'] as const

/** The fewest and most node agents a localnet runs. */
const NODE_COUNT_BOUNDS = {min: 1, max: 16} as const

/** Lamports in a SOL: the decimals of a `sol` amount. */
const SOL_DECIMALS = 9

const same = (text: string) => text

/** A kind whose value is the text itself once `test` accepts it. */
function textKind(describe: string, test: (text: string) => boolean): Kind<string> {
  return {describe, read: (text) => (test(text) ? {value: text} : {why: describe}), write: same}
}

/** One of `choices`, spelt exactly. */
function choiceKind<const C extends readonly string[]>(choices: C): Kind<C[number]> {
  const describe = `one of ${choices.join(', ')}`
  return {
    describe,
    read: (text) => ((choices as readonly string[]).includes(text) ? {value: text as C[number]} : {why: describe}),
    write: same,
  }
}

/** A whole number from `min` to `max`, written in digits only (no sign, point or exponent). */
function wholeKind(describe: string, min: number, max: number): Kind<number> {
  return {
    describe,
    read(text) {
      const trimmed = text.trim()
      const value = /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : Number.NaN
      return value >= min && value <= max ? {value} : {why: describe}
    },
    write: String,
  }
}

/** A number above 0 written in digits with at most 9 decimals (`50`, `0.25`): a rate or a scale. */
const positive: Kind<number> = {
  describe: 'a number above 0 such as 50 or 0.25',
  read(text) {
    const trimmed = text.trim()
    const value = /^\d{1,12}(\.\d{1,9})?$/.test(trimmed) ? Number(trimmed) : Number.NaN
    return value > 0 ? {value} : {why: this.describe}
  },
  write: String,
}

/** An http or https URL; its value has no trailing slash, so a path can be appended. */
const url: Kind<string> = {
  describe: 'an http or https URL such as https://example.org',
  read(text) {
    let parsed: URL
    try {
      parsed = new URL(text)
    } catch {
      return {why: this.describe}
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return {why: 'an http or https URL'}
    return {value: text.replace(/\/+$/, '')}
  },
  write: same,
}

/** A base58 Solana address, in its one spelling. */
const address: Kind<string> = {
  describe: 'a base58 Solana address',
  read(text) {
    const bytes = decodeBase58(text, 'key')
    return bytes ? {value: bs58.encode(bytes)} : {why: this.describe}
  },
  write: same,
}

const BOOLEAN_TEXT: Record<string, boolean> = {true: true, false: false, '1': true, '0': false}

/** true or false (1 and 0, as environment variables are often set); written as true or false. */
const boolean: Kind<boolean> = {
  describe: 'true or false (or 1 or 0)',
  read(text) {
    const value = BOOLEAN_TEXT[text.trim().toLowerCase()]
    return value === undefined ? {why: this.describe} : {value}
  },
  write: String,
}

/** An amount of SOL with at most 9 decimals, read into lamports exactly. */
const sol: Kind<bigint> = {
  describe: 'an amount of SOL such as 0.001',
  read(text) {
    try {
      return {value: parseAmount(text, SOL_DECIMALS, 'SOL')}
    } catch (error) {
      if (isGpunetError(error)) return {why: `${this.describe}, with at most ${SOL_DECIMALS} decimals`}
      throw error
    }
  },
  write: (lamports) => formatAmount(lamports, SOL_DECIMALS),
}

/** A file or folder, made absolute: a setting is read from other working directories (a background localnet). */
const path: Kind<string> = {
  describe: 'a path',
  read: (text, cwd) => ({value: isAbsolute(text) ? text : resolve(cwd, text)}),
  write: same,
}

/** A comma-separated list of browser origins (`https://a.example,http://localhost:3000`). */
const origins: Kind<string[]> = {
  describe: 'a comma-separated list of origins such as https://app.example,http://localhost:3000 (or *)',
  read(text) {
    const list = text
      .split(',')
      .map((origin) => origin.trim().replace(/\/+$/, ''))
      .filter((origin) => origin !== '')
    const origin = (text: string) => text === '*' || /^https?:\/\/[^/\s]+$/.test(text)
    return list.every(origin) ? {value: list} : {why: this.describe}
  },
  write: (list) => list.join(','),
}

/** A duration as people write it (`90s`, `5m`, `1h30m`, `2d`), read into milliseconds. */
const duration: Kind<number> = {
  describe: 'a duration such as 90s, 5m, 1h30m or 2d',
  read(text) {
    const ms = durationMs(text)
    return ms === null ? {why: this.describe} : {value: ms}
  },
  write: (ms) => `${ms}ms`,
}

/**
 * Whole seconds: a duration (`90s`, `10m`, `2h`) or a bare number, which keeps the meaning it always had on
 * gpunet's flags (seconds; the network's own CLI counts minutes, so a unit says which).
 */
const seconds: Kind<number> = {
  describe: 'a duration such as 600 (seconds), 90s, 10m or 2h',
  read(text) {
    const trimmed = text.trim()
    const ms = /^\d{1,12}$/.test(trimmed) ? Number(trimmed) * 1000 : durationMs(trimmed)
    if (ms === null || ms % 1000 !== 0) return {why: this.describe}
    return {value: ms / 1000}
  },
  write: (value) => `${value}s`,
}

/** A positive duration (`30s`, `10m`, `6h`) or a bare number of milliseconds, as the network's manager counts them. */
const cooldown: Kind<number> = {
  describe: 'a positive duration such as 30s, 10m or 6h (or milliseconds: 30000)',
  read(text) {
    const trimmed = text.trim()
    const ms = /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : durationMs(trimmed)
    return ms === null || ms <= 0 ? {why: this.describe} : {value: ms}
  },
  write: (ms) => `${ms}ms`,
}

/** The bounds of a drain (the drainTimeout setting): a second at least, a day at most. */
const DRAIN_BOUNDS_MS = {min: 1000, max: 86_400_000} as const

/** A drain's bound: a duration from 1s to 24h (`10m`, `90s`), read into milliseconds. */
const drain: Kind<number> = {
  describe: 'a duration from 1s to 24h such as 10m or 90s',
  read(text) {
    const ms = durationMs(text)
    return ms === null || ms < DRAIN_BOUNDS_MS.min || ms > DRAIN_BOUNDS_MS.max ? {why: this.describe} : {value: ms}
  },
  write: (ms) => `${ms}ms`,
}

/**
 * The bounds of holding a request at a stable URL while its deployment starts from zero: gateway/holding.ts'
 * MAX_HELD_LIMIT and MAX_HOLD_MS (this module imports no gateway; hold-settings.test.ts checks they agree).
 */
export const HOLD_SETTING_BOUNDS = {maxHeld: 1000, minHoldMs: 1000, maxHoldMs: 30 * 60_000} as const

/** How long a request may be held: a duration from 1s to 30m (`120s`, `10m`), read into milliseconds. */
const hold: Kind<number> = {
  describe: 'a duration from 1s to 30m such as 120s or 10m',
  read(text) {
    const ms = durationMs(text)
    return ms === null || ms < HOLD_SETTING_BOUNDS.minHoldMs || ms > HOLD_SETTING_BOUNDS.maxHoldMs
      ? {why: this.describe}
      : {value: ms}
  },
  write: (ms) => `${ms}ms`,
}

/** A positive number such as 2 or 1.5 (a cooldown's multiplier). */
const multiplier: Kind<number> = {
  describe: 'a positive number such as 2 or 1.5',
  read(text) {
    const trimmed = text.trim()
    const value = /^\d{1,9}(\.\d{1,9})?$/.test(trimmed) ? Number(trimmed) : Number.NaN
    return value > 0 ? {value} : {why: this.describe}
  },
  write: String,
}

/** Every kind, by the name a setting gives (settings.ts' SETTINGS). */
export const KINDS = {
  url,
  address,
  boolean,
  sol,
  path,
  duration,
  seconds,
  origins,
  cooldown,
  drain,
  hold,
  multiplier,
  positive,
  network: choiceKind(NETWORKS),
  ids: choiceKind(LOCALNET_IDS),
  runtime: choiceKind(RUNTIME_CHOICES),
  pull: choiceKind(PULL_POLICIES),
  host: textKind('a host name such as k8s.dev.nos.ci', (text) => /^[a-z0-9.-]+(:\d+)?$/i.test(text)),
  text: textKind('some text', (text) => text !== ''),
  bytes: wholeKind('a whole number of bytes, at least 1024', 1024, Number.MAX_SAFE_INTEGER),
  nodes: wholeKind(
    `a whole number of nodes from ${NODE_COUNT_BOUNDS.min} to ${NODE_COUNT_BOUNDS.max}`,
    NODE_COUNT_BOUNDS.min,
    NODE_COUNT_BOUNDS.max,
  ),
  gpus: wholeKind('a whole number of GPUs, 0 or more', 0, 1024),
  held: wholeKind(
    `a whole number of requests from 1 to ${HOLD_SETTING_BOUNDS.maxHeld}`,
    1,
    HOLD_SETTING_BOUNDS.maxHeld,
  ),
  streak: wholeKind('a whole number of rounds, at least 1', 1, 1_000_000),
  port: wholeKind('a port from 0 to 65535 (0 picks a free one)', 0, 65_535),
  rpcPort: wholeKind('a port from 0 to 65534 (the WebSocket takes the next; 0 picks a free pair)', 0, 65_534),
} as const satisfies Record<string, Kind<unknown>>

/** The name of a kind. */
export type KindName = keyof typeof KINDS

/** The value a kind reads text into. */
export type KindValue<K extends KindName> = (typeof KINDS)[K] extends Kind<infer T> ? T : never

/** Reads `text` as `kind`; `cwd` makes a relative path absolute. */
export function readKind<K extends KindName>(kind: K, text: string, cwd = process.cwd()): Reading<KindValue<K>> {
  return (KINDS[kind] as Kind<KindValue<K>>).read(text, cwd)
}
