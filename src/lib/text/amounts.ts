/** Token and SOL amounts: decimal text to base units and back, exactly (no floating point). */
import {ExitCode, GpunetError} from '../errors.js'

/** The largest amount the chain holds in one account: amounts are u64 base units. */
export const MAX_BASE_UNITS = 2n ** 64n - 1n

/**
 * Parses a decimal amount ("1.5", "0.000001", ".5") into base units with `decimals` places, exactly (no floating
 * point); usage error (exit 2) for anything else, for more decimals than the unit has, and beyond u64.
 */
export function parseAmount(text: string, decimals: number, what: string): bigint {
  const match = /^(\d*)(?:\.(\d*))?$/.exec(text.trim())
  const [whole = '', fraction = ''] = match ? [match[1], match[2]] : []
  const example = `e.g. 1.5, with at most ${decimals} decimals`
  if (!match || (whole === '' && fraction === '')) {
    throw new GpunetError('invalid_amount', `invalid ${what} amount "${text}": not a non-negative decimal number`, {
      exitCode: ExitCode.USAGE,
      hint: `Give a number of ${what === 'SOL' ? 'SOL' : 'tokens'}, ${example}.`,
      fields: {amount: text},
    })
  }
  if (fraction.length > decimals) {
    throw new GpunetError('invalid_amount', `invalid ${what} amount "${text}": more than ${decimals} decimals`, {
      exitCode: ExitCode.USAGE,
      hint: `A ${what} has ${decimals} decimals; ${example}.`,
      fields: {amount: text},
    })
  }
  const units = BigInt(whole || '0') * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0')
  if (units > MAX_BASE_UNITS) {
    throw new GpunetError(
      'amount_too_large',
      `${what} amount "${text}" is too large: at most ${formatAmount(MAX_BASE_UNITS, decimals)} fits in an account`,
      {
        exitCode: ExitCode.USAGE,
        hint: 'Amounts are u64 base units on chain; give a smaller amount.',
        fields: {amount: text},
      },
    )
  }
  return units
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
  /** Credits: the network's prepaid balance (localnet: one token a credit), 6 decimals as tokens. */
  unit: 'token' | 'SOL' | 'credit'
  baseUnits: string
}

/** The `--json` shape of an amount of `decimals` places. */
export function amountJson(units: bigint, decimals: number, unit: AmountJson['unit']): AmountJson {
  return {amount: Number(formatAmount(units, decimals)), unit, baseUnits: units.toString()}
}
