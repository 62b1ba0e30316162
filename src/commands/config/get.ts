import * as Args from '@oclif/core/args'

import {BaseCommand} from '../../cli/base-command.js'
import {marketFlags} from '../../cli/flags.js'
import {isSecretSetting, SECRET_SETTINGS} from '../../lib/settings/catalog.js'
import {checkKey, configScope, settingsInForce} from '../../lib/settings/config-settings.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'

export default class ConfigGet extends BaseCommand {
  static override summary = 'Print the value in force of one setting (stdout: the value alone).'
  static override description = `The value in force on the network (or the profile's), from the environment, the profile, the config file or the preset; its source goes to stderr. A setting nothing sets is exit 7. ${SECRET_SETTINGS.join(', ')} are never printed (exit 2): \`config list\` says whether it is set.`

  static override examples = [
    '<%= config.bin %> config get rpcUrl --network devnet',
    'RPC=$(<%= config.bin %> config get rpcUrl --profile prod)',
  ]

  static override args = {key: Args.string({description: 'setting name, e.g. rpcUrl', required: true})}

  static override flags = {network: marketFlags.network, profile: marketFlags.profile}

  async run(): Promise<{key: string; value: string; source: string}> {
    const {args} = await this.parse(ConfigGet)
    const {settings} = this
    checkKey(args.key, configScope(settings.profile ?? undefined, settings.network))
    if (isSecretSetting(args.key)) {
      throw new GpunetError('config_value_hidden', `${args.key} is never printed`, {
        exitCode: ExitCode.USAGE,
        hint: '`gpunet config list` says whether it is set, and where',
      })
    }
    const row = settingsInForce(settings).find((setting) => setting.key === args.key)!
    if (!row.set) {
      throw new GpunetError('not_found', `${args.key} is not set for ${settings.network}`, {
        exitCode: ExitCode.NOT_FOUND,
        hint: `set it with \`gpunet config set ${args.key} VALUE\`, or ${row.env}`,
      })
    }
    this.say(row.value!)
    this.note(`(from ${row.source})`)
    return {key: args.key, value: row.value!, source: row.source!}
  }
}
