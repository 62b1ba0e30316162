import {type Hook, loadHelpClass, toStandardizedId} from '@oclif/core'

import {renderFailure} from '../failure.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {suggestCommand} from '../suggest.js'

/**
 * `gpunet help [COMMAND]` shows help (without the help plugin, whose load every command would pay for);
 * any other unknown command is a usage error (exit 2) that suggests the closest command.
 */
const hook: Hook<'command_not_found'> = async function (options) {
  const {config} = options
  const words = toStandardizedId(options.id, config).split(':')
  if (words[0] === 'help') {
    const Help = await loadHelpClass(config)
    await new Help(config).showHelp([...words.slice(1), ...(options.argv ?? [])])
    return
  }
  const suggestion = suggestCommand(words, config)
  renderFailure(
    new GpunetError('unknown_command', `"${words.join(' ')}" is not a gpunet command`, {
      exitCode: ExitCode.USAGE,
      hint: suggestion
        ? `did you mean "${config.bin} ${suggestion}"? Run "${config.bin} --help" for all commands.`
        : `run "${config.bin} --help" for all commands`,
    }),
    (options.argv ?? []).includes('--json'),
  )
}

export default hook
