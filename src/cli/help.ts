import type {Command} from '@oclif/core/command'
import {Help} from '@oclif/core/help'

import {renderFailure} from './failure.js'
import {ExitCode, GpunetError} from '../lib/errors.js'
import {suggestCommand} from './suggest.js'

/** One command as `gpunet help --json` describes it. */
export interface CommandDoc {
  /** The command as typed: `job post`. */
  id: string
  summary?: string
  description?: string
  args: {name: string; description?: string; required: boolean}[]
  flags: {
    name: string
    char?: string
    type: 'boolean' | 'option'
    description?: string
    required: boolean
    multiple: boolean
    default?: unknown
    options?: readonly string[]
    /** A boolean flag that also takes the `--no-NAME` form. */
    allowNo?: boolean
  }[]
  examples: string[]
}

/**
 * oclif's help, plus `--json` like every other command: `gpunet help --json`, `gpunet help job --json` and
 * `gpunet job post --help --json` print `{"commands": [...]}`, every command of the subject with its arguments,
 * flags and examples, for tools that build on gpunet (completions, wrappers, docs).
 */
export default class GpunetHelp extends Help {
  override async showHelp(argv: string[]): Promise<void> {
    const end = argv.indexOf('--')
    const options = end === -1 ? argv : argv.slice(0, end)
    const json = options.includes('--json')
    const words = options.filter((arg) => !arg.startsWith('-') && arg !== 'help')
    const commands = this.commandsOf(words)
    if (!commands) {
      const subject = words.join(' ')
      const suggestion = suggestCommand(words, this.config)
      const all = `run "${this.config.bin} help${json ? ' --json' : ''}" for every command`
      renderFailure(
        new GpunetError('unknown_command', `"${subject}" is not a gpunet command or topic`, {
          exitCode: ExitCode.USAGE,
          hint: suggestion ? `did you mean "${this.config.bin} help ${suggestion}"? Or ${all}` : all,
        }),
        json,
      )
      return
    }
    if (!json) return super.showHelp(argv)
    process.stdout.write(`${JSON.stringify({commands: commands.map((c) => this.describe(c))}, null, 2)}\n`)
  }

  /** The visible commands a help subject covers: all for none, the command itself, or a topic's commands. */
  private commandsOf(words: string[]): Command.Loadable[] | undefined {
    const visible = this.config.commands.filter((c) => !c.hidden).sort((a, b) => (a.id < b.id ? -1 : 1))
    if (words.length === 0) return visible
    // A command's arguments and flag values follow its words (`job get ADDRESS --help`): its longest prefix.
    for (let n = words.length; n > 0; n--) {
      const command = this.config.findCommand(words.slice(0, n).join(':'))
      if (command) return [command]
    }
    const id = words.join(':')
    if (!this.config.findTopic(id)) return undefined
    return visible.filter((c) => c.id.startsWith(`${id}:`))
  }

  private describe(command: Command.Loadable): CommandDoc {
    const examples = (command.examples ?? []).map((example) =>
      this.render(typeof example === 'string' ? example : example.command),
    )
    return {
      id: command.id.replaceAll(':', ' '),
      summary: command.summary,
      description: command.description,
      args: Object.values(command.args).map((a) => ({
        name: a.name,
        description: a.description,
        required: Boolean(a.required),
      })),
      flags: Object.values(command.flags)
        .filter((f) => !f.hidden)
        .map((f) => ({
          name: f.name,
          char: f.char,
          type: f.type,
          description: f.summary ?? f.description,
          required: Boolean(f.required),
          multiple: f.type === 'option' && Boolean(f.multiple),
          default: f.default,
          options: f.type === 'option' ? f.options : undefined,
          allowNo: f.type === 'boolean' ? Boolean(f.allowNo) : undefined,
        })),
      examples,
    }
  }
}
