import {type Hook, loadHelpClass, toStandardizedId} from '@oclif/core'
import {distance} from 'fastest-levenshtein'

import {renderFailure} from '../base-command.js'
import {ExitCode, GpunetError} from '../lib/errors.js'

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
  const suggestion = closestCommand(words, config.commandIDs) ?? closestInTopic(words, config)
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

/** The command whose words are nearest to what was typed (oclif folds the arguments into the id), if near. */
function closestCommand(typed: string[], commandIds: string[]): string | undefined {
  let best: {id: string; cost: number} | undefined
  for (const id of commandIds) {
    const words = id.split(':')
    const cost = distance(typed.slice(0, words.length).join(' '), words.join(' '))
    if (!best || cost < best.cost) best = {id: words.join(' '), cost}
  }
  return best && best.cost <= Math.max(2, Math.floor(best.id.length / 4)) ? best.id : undefined
}

/** For a misspelt topic ("jobb"), the command in the nearest topic, or the topic itself ("job"). */
function closestInTopic(typed: string[], config: {topics: {name: string}[]; commandIDs: string[]}): string | undefined {
  const [first = '', ...rest] = typed
  let best: {name: string; cost: number} | undefined
  for (const {name} of config.topics) {
    if (name.includes(':')) continue
    const cost = distance(first, name)
    if (!best || cost < best.cost) best = {name, cost}
  }
  if (!best || best.cost > Math.max(1, Math.floor(best.name.length / 3))) return undefined
  return (rest.length > 0 ? closestCommand([best.name, ...rest], config.commandIDs) : undefined) ?? best.name
}

export default hook
