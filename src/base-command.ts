import type {Interfaces} from '@oclif/core'
import {Command} from '@oclif/core/command'
import * as Errors from '@oclif/core/errors'
import {ux} from '@oclif/core/ux'

import {stderrColors, stdoutColors, type Style} from './lib/colors.js'
import {ExitCode, GpunetError, isGpunetError} from './lib/errors.js'
import {settingFlagValues} from './flags.js'
import type {Network} from './lib/network.js'
import {resolveSettings, type Settings, type SettingsInput} from './lib/settings.js'
import {printable} from './lib/terminal-text.js'
import {usageError} from './lib/usage-errors.js'

/** oclif's own bound for parsed flags and args (its FlagOutput and ArgOutput, which it does not export). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ParsedValues = {[name: string]: any}

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
 * The same positional arguments, none of which oclif may fill from piped stdin (which it does for a missing one):
 * a `while read` loop around gpunet would lose lines, and `... | gpunet job post --file x` would take the pipe as a
 * second file. Commands that read stdin say so (`-`, `--file -`, a secret's value) and read it themselves.
 */
function argsIgnoringStdin<A extends Interfaces.ArgInput | undefined>(args: A): A {
  if (!args) return args
  return Object.fromEntries(Object.entries(args).map(([name, arg]) => [name, {...arg, ignoreStdin: true}])) as A
}

/**
 * The one base of every gpunet command: it owns `--json`, warnings on stderr, error rendering and exit codes,
 * so each command parses its input, calls the library and renders.
 */
export abstract class BaseCommand extends Command {
  static override enableJsonFlag = true
  /** Whether `--json` prints JSON lines (`job logs`, `job stats`): then an error is one more line, on one line. */
  static jsonLines = false
  /** Whether `parse` settles `--profile` and `--network` (the config commands read them as plain scopes). */
  static settlesProfile = true
  /** The one network of a command that acts on no other (`localnet start`): its settings are that network's. */
  static settingsNetwork: Network | undefined = undefined

  /** What the command's flags give the settings resolver, kept by `parse`. */
  private settingsInput: SettingsInput = {}
  private resolvedSettings: Settings | undefined

  /**
   * The command's settings (flag > environment > profile > config file > preset), resolved once: in `parse` for
   * the commands that take `--network` or `--profile`, else on first use. The library below takes them as values.
   */
  protected get settings(): Settings {
    this.resolvedSettings ??= resolveSettings(this.settingsInput)
    return this.resolvedSettings
  }

  /**
   * Parses as oclif does (never filling an argument from stdin), then resolves the command's settings once from the
   * setting flags it declares: `--network` becomes the network in force (the profile's, or localnet, when it was
   * not given), and the profile in use is announced on stderr.
   */
  protected override async parse<F extends ParsedValues, B extends ParsedValues, A extends ParsedValues>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    // Read member by member: a command class's inherited statics (enableJsonFlag, baseFlags) are not spread.
    const input = options ?? (this.constructor as unknown as Interfaces.Input<F, B, A>)
    const output = await super.parse(
      {
        flags: input.flags,
        baseFlags: input.baseFlags,
        enableJsonFlag: input.enableJsonFlag,
        strict: input.strict,
        '--': input['--'],
        args: argsIgnoringStdin(input.args),
      },
      argv,
    )
    const command = this.constructor as typeof BaseCommand
    if (!command.settlesProfile) return output
    const declared = (input.flags ?? {}) as Record<string, unknown>
    const flags = output.flags as {network?: string; profile?: string}
    this.settingsInput = {
      flags: settingFlagValues(declared, output.flags as Record<string, unknown>),
      profile: 'profile' in declared ? flags.profile : undefined,
      network: command.settingsNetwork,
      env: process.env,
      announce: 'network' in declared ? (line) => this.note(line) : undefined,
    }
    this.resolvedSettings = undefined
    if ('network' in declared || 'profile' in declared) {
      const {network} = this.settings
      if ('network' in declared) flags.network = network
    }
    return output
  }

  /** Writes a human line to stdout, suppressed under `--json` (where the returned value is printed instead). */
  protected say(text = ''): void {
    if (!this.jsonEnabled()) ux.stdout(text)
  }

  /** Writes a warning to stderr in both output modes; stdout stays clean for data. */
  protected note(text: string): void {
    process.stderr.write(`${text}\n`)
  }

  /** Ends the command with a non-zero exit code after its output was printed (e.g. "some files are invalid"). */
  protected setExitCode(code: number): void {
    process.exitCode = code
  }

  /**
   * Prints the `--json` document as JSON.stringify writes it. oclif's own printer runs it through its colorizer,
   * which colors only from a theme file (gpunet has none) yet tokenizes the whole text with regular expressions:
   * 8 to 30 times JSON.stringify's own time (0.19 s for 870 KB of `job list`, measured on Node 20), for the same text.
   */
  override logJson(json: unknown): void {
    ux.stdout(JSON.stringify(json, null, 2))
  }

  /** Colors text bound for stdout; plain under NO_COLOR or when stdout is not a terminal (FORCE_COLOR overrides). */
  protected color(style: Style, text: string): string {
    return stdoutColors[style](text)
  }

  /**
   * Ends with `failure`'s exit code after a report that must still be printed whole (a job `--wait` saw fail):
   * its Error and Hint lines on stderr, or under `--json` the report with the error document as its `error`.
   */
  protected failWithReport<T extends object>(report: T, failure: GpunetError | null): T {
    if (!failure) return report
    if (this.jsonEnabled()) {
      process.exitCode = failure.exitCode
      return {...report, ...failure.toJSON()}
    }
    renderFailure(failure, false)
    return report
  }

  protected override async catch(error: Error & {exitCode?: number}): Promise<void> {
    const {jsonLines} = this.constructor as typeof BaseCommand
    renderFailure(toGpunetError(error), this.jsonEnabled(), {jsonLines})
  }
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

/** Resolves once stdout drained; shared by every line written meanwhile (one listener, not one per line). */
let drained: Promise<void> | null = null

/**
 * Writes a line to stdout as it comes (`job logs`, `deployment events --follow`); while stdout is full, returns a
 * promise of its drain, so whatever feeds it waits instead of filling memory.
 */
export function writeLine(text: string): void | Promise<void> {
  if (process.stdout.write(`${text}\n`)) return
  drained ??= new Promise<void>((resolve) =>
    process.stdout.once('drain', () => {
      drained = null
      resolve()
    }),
  )
  return drained
}
