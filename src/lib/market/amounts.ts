/** Token and SOL amounts: decimal text to base units and back, exactly (no floating point). */
import {ExitCode, GpunetError} from '../errors.js'

/** Parses a decimal amount ("1.5") into base units with `decimals` places, without floating point. */
export function parseAmount(text: string, decimals: number, what: string): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim())
  if (!match || (match[2]?.length ?? 0) > decimals) {
    throw new GpunetError('invalid_amount', `invalid ${what} amount "${text}"`, {
      exitCode: ExitCode.USAGE,
      hint: `Give a non-negative number with at most ${decimals} decimals, e.g. 1.5.`,
    })
  }
  return BigInt(match[1]!) * 10n ** BigInt(decimals) + BigInt((match[2] ?? '').padEnd(decimals, '0') || '0')
}

/** Formats base units as a decimal amount ("1.5"). */
export function formatAmount(units: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals)
  const fraction = (units % scale).toString().padStart(decimals, '0').replace(/0+$/, '')
  return fraction ? `${units / scale}.${fraction}` : `${units / scale}`
}

/** An amount in `--json` output: a number in whole units for reading, and the exact base units as a string. */
export interface AmountJson {
  amount: number
  unit: 'token' | 'SOL'
  baseUnits: string
}

/** The `--json` shape of an amount of `decimals` places. */
export function amountJson(units: bigint, decimals: number, unit: AmountJson['unit']): AmountJson {
  return {amount: Number(formatAmount(units, decimals)), unit, baseUnits: units.toString()}
}
