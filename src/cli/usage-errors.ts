/**
 * oclif's parser errors in gpunet's own words, each a usage error (exit 2) with a hint: "did you mean" for a
 * misspelt flag or option value, the flag's name with its dashes, the value that was refused.
 */
import {stripVTControlCharacters} from 'node:util'

import {ExitCode, GpunetError} from '../lib/errors.js'
import {closest} from './suggest.js'
import {counted} from '../lib/text/words.js'

/** What oclif's parse errors carry about the command: its flag definitions (name, char, options). */
interface ParseInput {
  flags?: Record<string, {char?: string; options?: readonly string[]}>
}

const HELP_HINT = 'run the command with --help for its arguments and flags'

/** The usage error of a parser failure (any error oclif's parser throws), in gpunet's words. */
export function usageError(error: Error & {flags?: unknown; parse?: {input?: ParseInput}}): GpunetError {
  const text = stripVTControlCharacters(error.message)
    .replace(/\nSee more help with --help$/, '')
    .trim()
  const flags = error.parse?.input?.flags ?? {}
  const usage = (message: string, hint = HELP_HINT) =>
    new GpunetError('usage', message, {exitCode: ExitCode.USAGE, hint})

  if (Array.isArray(error.flags) && /^Nonexistent flags?:/.test(text)) {
    const typed = error.flags.map(String)
    const names = Object.keys(flags).map((name) => `--${name}`)
    const guess = typed.length === 1 ? closest(typed[0]!.split('=')[0]!, names) : undefined
    return usage(
      `unknown flag${typed.length === 1 ? '' : 's'} ${typed.join(', ')}`,
      guess ? `did you mean ${guess}? Or ${HELP_HINT}` : HELP_HINT,
    )
  }
  const parsing = /^Parsing --([\w-]+)\s*\n\s*(.*)$/s.exec(text)
  if (parsing) {
    const [, name, reason] = parsing as unknown as [string, string, string]
    const integer = /^Expected an integer(.*?) but received: (.*)$/s.exec(reason)
    const detail = integer ? `expects a whole number${integer[1]}, not "${integer[2]}"` : lowerFirst(reason)
    return usage(`--${name} ${detail}`)
  }
  const option = /^Expected --([\w-]+)=(.*) to be one of: (.*)$/s.exec(text)
  if (option) {
    const [, name, value, list] = option as unknown as [string, string, string, string]
    const options = list.split(', ')
    const guess = closest(value, options, 1)
    return usage(
      `--${name} must be one of ${options.join(', ')}, not "${value}"`,
      guess ? `did you mean --${name} ${guess}?` : HELP_HINT,
    )
  }
  const argument = /^Expected (.*) to be one of: (.*)$/s.exec(text)
  if (argument) {
    const [, value, list] = argument as unknown as [string, string, string]
    const options = list.split(', ')
    const guess = closest(value, options, 1)
    return usage(`"${value}" is not one of ${options.join(', ')}`, guess ? `did you mean ${guess}?` : HELP_HINT)
  }
  const failed = /^The following errors? occurred:\n(.*)$/s.exec(text)
  if (failed) {
    const reasons = failed[1]!
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .map((reason) =>
        reason
          .replace(/^Missing required flag ([\w-]+)$/, 'missing the required flag --$1')
          .replace(/^--([\w-]+)=\S* cannot also be provided when using --([\w-]+)$/, '--$1 cannot be used with --$2'),
      )
    return usage(reasons.join('; '))
  }
  const args = /^Missing (\d+) required args?(?::\n(.*))?$/s.exec(text)
  if (args) {
    const named = (args[2] ?? '')
      .split('\n')
      .map((line) => line.trim().split(/\s{2,}/) as [string, string?])
      .filter(([name]) => name !== '')
      .map(([name, description]) => (description ? `${name.toUpperCase()} (${description})` : name.toUpperCase()))
    return usage(`missing ${named.length > 0 ? named.join(', ') : counted(Number(args[1]), 'required argument')}`)
  }
  const unexpected = /^Unexpected arguments?: (.*)$/s.exec(text)
  if (unexpected) return usage(`unexpected argument${unexpected[1]!.includes(', ') ? 's' : ''} ${unexpected[1]}`)
  return usage(lowerFirst(text))
}

function lowerFirst(text: string): string {
  return /^[A-Z][a-z]/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text
}
