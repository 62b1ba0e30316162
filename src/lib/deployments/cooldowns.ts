/**
 * The manager's cooldowns, as the network's manager has them: how long a failed task waits before it is tried
 * again (a vault short of funds waits on a slower ladder: it may be topped up meanwhile), and how long INFINITE's
 * next listing waits after rounds of rapid completions, with the streak after which the fail-safe stops the
 * deployment. Each ladder is min(base x multiplier^n, max); the manager's settings choose them (catalog.ts), the
 * strategies and the worker divide them by a deployment's time_scale as every other duration.
 */
import {ExitCode, GpunetError} from '../errors.js'

/** An escalating back-off: the n-th wait (0 for the first) is min(baseMs x multiplier^n, maxMs). */
export interface CooldownLadder {
  baseMs: number
  maxMs: number
  multiplier: number
}

export interface Cooldowns {
  /** A task that failed for any reason but funds. */
  retry: CooldownLadder
  /** A task the vault could not pay for. */
  insufficientFunds: CooldownLadder
  /** INFINITE's next listing after a round of rapid completions. */
  rapidCompletion: CooldownLadder
  /** Rapid rounds in a row at which the fail-safe stops the deployment instead of throttling again. */
  maxStreak: number
}

/** The network's manager's defaults (its src/config/defaultConfig.ts). */
export const DEFAULT_COOLDOWNS: Cooldowns = {
  retry: {baseMs: 30_000, maxMs: 600_000, multiplier: 2},
  insufficientFunds: {baseMs: 600_000, maxMs: 21_600_000, multiplier: 2},
  rapidCompletion: {baseMs: 60_000, maxMs: 3_600_000, multiplier: 2},
  maxStreak: 8,
}

/** The n-th wait of a ladder (n = 0 is the first: its base), in ms, before any time_scale. */
export function cooldownMs(n: number, ladder: CooldownLadder): number {
  // The exponent is capped where any positive multiplier above 1 is long past every max (and 2^1000 stays finite).
  const exponent = Math.min(Math.max(0, Math.floor(n)), 1000)
  return Math.min(ladder.baseMs * ladder.multiplier ** exponent, ladder.maxMs)
}

/** Cooldowns as a manager's caller gives them: any part left out is the network's default. */
export interface CooldownsGiven {
  retry?: Partial<CooldownLadder>
  insufficientFunds?: Partial<CooldownLadder>
  rapidCompletion?: Partial<CooldownLadder>
  maxStreak?: number
}

/** The setting of each number of the cooldowns (catalog.ts' keys), for the errors that name one. */
export const COOLDOWN_SETTINGS = {
  retry: {
    base: 'managerRetryCooldownBase',
    max: 'managerRetryCooldownMax',
    multiplier: 'managerRetryCooldownMultiplier',
  },
  insufficientFunds: {
    base: 'managerFundsCooldownBase',
    max: 'managerFundsCooldownMax',
    multiplier: 'managerFundsCooldownMultiplier',
  },
  rapidCompletion: {
    base: 'managerRapidCooldownBase',
    max: 'managerRapidCooldownMax',
    multiplier: 'managerRapidCooldownMultiplier',
  },
  maxStreak: 'managerRapidMaxStreak',
} as const

/**
 * Cooldowns from what the manager was given over the defaults; a number that is not positive (a whole number for
 * the streak) is exit 2 naming its setting, before anything starts. The settings' kinds refuse such text already:
 * this guards the library's callers that pass numbers.
 */
export function checkCooldowns(given: CooldownsGiven = {}): Cooldowns {
  const cooldowns: Cooldowns = {
    retry: {...DEFAULT_COOLDOWNS.retry, ...given.retry},
    insufficientFunds: {...DEFAULT_COOLDOWNS.insufficientFunds, ...given.insufficientFunds},
    rapidCompletion: {...DEFAULT_COOLDOWNS.rapidCompletion, ...given.rapidCompletion},
    maxStreak: given.maxStreak ?? DEFAULT_COOLDOWNS.maxStreak,
  }
  for (const ladder of ['retry', 'insufficientFunds', 'rapidCompletion'] as const) {
    const names = COOLDOWN_SETTINGS[ladder]
    positive(cooldowns[ladder].baseMs, names.base)
    positive(cooldowns[ladder].maxMs, names.max)
    positive(cooldowns[ladder].multiplier, names.multiplier)
  }
  if (!Number.isSafeInteger(cooldowns.maxStreak) || cooldowns.maxStreak < 1)
    throw refused(COOLDOWN_SETTINGS.maxStreak, cooldowns.maxStreak, 'a whole number of rounds, at least 1')
  return cooldowns
}

function positive(value: number, setting: string) {
  if (!Number.isFinite(value) || value <= 0) throw refused(setting, value, 'a positive number')
}

function refused(setting: string, value: number, what: string): GpunetError {
  return new GpunetError('invalid_setting', `the ${setting} setting is ${value}: it must be ${what}`, {
    exitCode: ExitCode.USAGE,
    hint: `set ${setting} to ${what} (docs/deployment-manager.md, "Cooldowns"), or unset it for the network's default; nothing was started`,
  })
}

/** What the cooldowns are read from: a command's resolved settings (settings.ts' `typed`). */
export interface CooldownSettingsSource {
  typed(key: CooldownSettingKey): {value: number} | undefined
}

type Ladder = 'retry' | 'insufficientFunds' | 'rapidCompletion'
type CooldownSettingKey =
  (typeof COOLDOWN_SETTINGS)[Ladder][keyof (typeof COOLDOWN_SETTINGS)[Ladder]] | typeof COOLDOWN_SETTINGS.maxStreak

/** The cooldowns the settings give (each read by its kind: exit 2 naming a bad one), the network's defaults for the rest. */
export function cooldownsFromSettings(settings: CooldownSettingsSource): Cooldowns {
  const ladder = (names: (typeof COOLDOWN_SETTINGS)[Ladder]) => {
    const given: Partial<CooldownLadder> = {}
    const base = settings.typed(names.base)?.value
    const max = settings.typed(names.max)?.value
    const multiplier = settings.typed(names.multiplier)?.value
    if (base !== undefined) given.baseMs = base
    if (max !== undefined) given.maxMs = max
    if (multiplier !== undefined) given.multiplier = multiplier
    return given
  }
  return checkCooldowns({
    retry: ladder(COOLDOWN_SETTINGS.retry),
    insufficientFunds: ladder(COOLDOWN_SETTINGS.insufficientFunds),
    rapidCompletion: ladder(COOLDOWN_SETTINGS.rapidCompletion),
    maxStreak: settings.typed(COOLDOWN_SETTINGS.maxStreak)?.value,
  })
}
