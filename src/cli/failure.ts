// How a failure is shown at the edge, apart from BaseCommand: the paths served before oclif loads
// (src/cli/fast-start.ts) render theirs with it too, without loading the commands' flags and settings (nor web3.js).
import * as Errors from '@oclif/core/errors'
import {ux} from '@oclif/core/ux'

import {stderrColors} from '../lib/terminal/colors.js'
import {ExitCode, GpunetError, isGpunetError} from '../lib/errors.js'
import {printable} from '../lib/text/terminal-text.js'
import {usageError} from './usage-errors.js'

/** Normalizes anything thrown inside a command into a GpunetError with the right exit code. */
export function toGpunetError(error: unknown): GpunetError {
  if (isGpunetError(error)) return error
  // A flag's own parser failing (a bad --timeout) is reported by oclif as "Parsing --flag", not always a CLIError.
  if (error instanceof Error && /^Parsing --/.test(error.message)) return usageError(error)
  if (error instanceof Errors.CLIError) {
    const exit = (error as Errors.CLIError).oclif?.exit
    // oclif's own parse errors (unknown flag, missing argument, bad flag value) are usage errors.
    if ('parse' in error || exit === ExitCode.USAGE) return usageError(error)
    return new GpunetError('cli_error', stripOclifPrefix(error.message), {
      exitCode: (exit as 0 | 1 | undefined) ?? ExitCode.FAILURE,
    })
  }
  const message = error instanceof Error ? error.message : String(error)
  return new GpunetError('unexpected', `unexpected failure: ${message}`, {
    cause: error,
    exitCode: ExitCode.FAILURE,
    hint: 'Run again with GPUNET_DEBUG=1 to see the stack trace, and report it if it persists.',
  })
}

function stripOclifPrefix(message: string): string {
  return message.replace(/\nSee more help with --help$/, '').trim()
}

/**
 * Prints a failure once, at the edge: `{"error": {...}}` on stdout under `--json` (on one line after JSON lines),
 * else `Error:` and `Hint:` lines on stderr; sets the exit code. The stack is shown only with GPUNET_DEBUG set.
 */
export function renderFailure(failure: GpunetError, json: boolean, options: {jsonLines?: boolean} = {}): void {
  process.exitCode = failure.exitCode
  // Following stopped because the output's reader went away (`| head -1`): a quiet, successful stop.
  if (failure.exitCode === ExitCode.OK) return
  if (json) {
    ux.stdout(options.jsonLines ? JSON.stringify(failure.toJSON()) : JSON.stringify(failure.toJSON(), null, 2))
    return
  }
  // A cancellation is the user's own choice, not an error: "Cancelled." alone says it.
  const cancelled = ([ExitCode.CANCELLED, ExitCode.TERMINATED, ExitCode.HANGUP] as number[]).includes(failure.exitCode)
  // Messages may quote what a remote party said (a node's close reason, a service's error message).
  const message = printable(failure.message, process.stderr)
  const lines = [cancelled ? message : `${stderrColors.red('Error:')} ${message}`]
  if (failure.hint) lines.push(`${stderrColors.dim('Hint:')} ${printable(failure.hint, process.stderr)}`)
  if (process.env.GPUNET_DEBUG && failure.cause instanceof Error && failure.cause.stack) lines.push(failure.cause.stack)
  process.stderr.write(`${lines.join('\n')}\n`)
}
