import type {Interfaces} from '@oclif/core'
import {Command} from '@oclif/core/command'
import {ux} from '@oclif/core/ux'

import {renderFailure, toGpunetError} from './failure.js'
import {stdoutColors, type Style} from '../lib/terminal/colors.js'
import {onOutputClosed, outputClosed} from '../lib/terminal/output-closed.js'
import type {GpunetError} from '../lib/errors.js'
import {settingFlagValues} from './flags.js'
import type {Network} from '../lib/network.js'
import type {SettingKey} from '../lib/settings/catalog.js'
import {resolveSettings, type Settings, type SettingsInput} from '../lib/settings/settings.js'

/** oclif's own bound for parsed flags and args (its FlagOutput and ArgOutput, which it does not export). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ParsedValues = {[name: string]: any}

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
 * The words with each choice-flag's value spelt as its choice (`--state running` as `--state RUNNING`): a choice
 * is taken in either case (docs/json.md, "States and outcomes"). Nothing after `--` is touched: a job's command.
 */
export function choicesInAnyCase(
  argv: readonly string[],
  flags: Record<string, {options?: readonly string[]}> = {},
): string[] {
  const words = [...argv]
  const end = words.includes('--') ? words.indexOf('--') : words.length
  const choice = (name: string, value: string) =>
    flags[name]?.options?.find((option) => option.toLowerCase() === value.toLowerCase()) ?? value
  for (let i = 0; i < end; i++) {
    const joined = /^--([\w-]+)=(.*)$/s.exec(words[i]!)
    if (joined) {
      words[i] = `--${joined[1]}=${choice(joined[1]!, joined[2]!)}`
      continue
    }
    const name = /^--([\w-]+)$/.exec(words[i]!)?.[1]
    if (name && flags[name]?.options && i + 1 < end) {
      words[i + 1] = choice(name, words[i + 1]!)
      i++
    }
  }
  return words
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
      choicesInAnyCase(argv ?? this.argv, input.flags as Record<string, {options?: readonly string[]}> | undefined),
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
    // Each setting a flag gave is read by its kind now (settings/kinds.ts), so a bad value is exit 2 naming the
    // setting before the command does anything, whichever value it reads first.
    for (const key of Object.keys(this.settingsInput.flags ?? {}) as SettingKey[]) this.settings.typed(key)
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

/** Resolves once stdout drained; shared by every line written meanwhile (one listener, not one per line). */
let drained: Promise<void> | null = null

/**
 * Writes a line to stdout as it comes (`job logs`, `deployment events --follow`); while stdout is full, returns a
 * promise of its drain, so whatever feeds it waits instead of filling memory.
 */
export function writeLine(text: string): void | Promise<void> {
  // Once the reader left, lines are dropped: a stream destroyed by EPIPE never drains, and its feeder would wait.
  if (outputClosed() || process.stdout.write(`${text}\n`)) return
  drained ??= new Promise<void>((resolve) => {
    const done = () => {
      drained = null
      process.stdout.off('drain', done)
      stopWaiting()
      resolve()
    }
    process.stdout.once('drain', done)
    const stopWaiting = onOutputClosed(done)
  })
  return drained
}
