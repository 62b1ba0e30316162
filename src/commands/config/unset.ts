import * as Args from '@oclif/core/args'

import {BaseCommand} from '../../cli/base-command.js'
import {configScopeFlags} from '../../cli/config-flags.js'
import {configFile, readConfig, writeConfig} from '../../lib/settings/config.js'
import {applySetting, checkKey, configScope, scopeName} from '../../lib/settings/config-settings.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'

export default class ConfigUnset extends BaseCommand {
  static override summary = 'Remove a setting, or with --profile and no key, a whole profile.'
  static override description =
    'The setting then comes from the next layer down (environment > profile > config file > preset; see `gpunet config list`). A profile keeps its network as long as it exists.'

  static override settlesProfile = false

  static override examples = [
    '<%= config.bin %> config unset rpcUrl --network devnet',
    '<%= config.bin %> config unset market --profile prod',
    '<%= config.bin %> config unset --profile old   # the whole profile',
  ]

  static override args = {key: Args.string({description: 'setting name; none removes the whole --profile'})}

  static override flags = {...configScopeFlags}

  /** `removed` is null when the key was not set there: nothing was removed, and the file is left as it was. */
  static mcp = {exclude: 'changes the settings the session runs with (its network is named once, at start)'}

  async run(): Promise<{file: string; scope: string; removed: string | null}> {
    const {args, flags} = await this.parse(ConfigUnset)
    const scope = configScope(flags.profile, flags.network)
    const document = readConfig(process.env)
    let removed: string
    if (args.key === undefined) {
      if (!('profile' in scope)) {
        throw new GpunetError('usage', 'name the setting to remove, or pass --profile NAME to remove a profile', {
          exitCode: ExitCode.USAGE,
        })
      }
      if (!Object.hasOwn(document.profiles, scope.profile)) {
        throw new GpunetError('profile_not_found', `there is no profile named ${scope.profile}`, {
          exitCode: ExitCode.NOT_FOUND,
        })
      }
      delete document.profiles[scope.profile]
      removed = scopeName(scope)
    } else {
      checkKey(args.key, scope)
      const before = JSON.stringify(document)
      applySetting(document, scope, args.key, undefined)
      if (JSON.stringify(document) === before) {
        const file = configFile(process.env)
        this.say(`Nothing to remove: ${args.key} is not set in ${scopeName(scope)} (${file})`)
        return {file, scope: scopeName(scope), removed: null}
      }
      removed = args.key
    }
    await writeConfig(document, process.env)
    const file = configFile(process.env)
    this.say(`${this.color('green', '✔')} Removed ${removed}${args.key ? ` from ${scopeName(scope)}` : ''} (${file})`)
    return {file, scope: scopeName(scope), removed}
  }
}
