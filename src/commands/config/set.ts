import * as Args from '@oclif/core/args'

import {BaseCommand} from '../../cli/base-command.js'
import {configScopeFlags} from '../../cli/config-flags.js'
import {isSecretSetting, SECRET_SETTINGS} from '../../lib/settings/catalog.js'
import {readConfig, writeConfig, configFile} from '../../lib/settings/config.js'
import {applySetting, checkKey, checkValue, configScope, scopeName} from '../../lib/settings/config-settings.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {askHidden, canPrompt} from '../../lib/terminal/prompt.js'
import {readStdin} from '../../lib/terminal/stdin.js'

export default class ConfigSet extends BaseCommand {
  static override summary = 'Set a setting in a profile, or in a network’s section of the config file.'
  static override description = `With --profile NAME (or GPUNET_PROFILE) the setting goes into that profile; a new profile starts with its network (\`config set network devnet --profile NAME\`). Without it, into the --network section of the config file. The file is written with mode 0600. ${SECRET_SETTINGS.join(', ')} are read from standard input (asked without echo at a terminal), never from an argument, and never printed. Keys: \`gpunet config list\`.`

  static override settlesProfile = false

  static override examples = [
    '<%= config.bin %> config set network mainnet --profile prod',
    '<%= config.bin %> config set rpcUrl https://my-rpc.example.org --profile prod',
    '<%= config.bin %> config set wallet ~/keys/prod.json --profile prod',
    'printf %s "$PINATA_JWT" | <%= config.bin %> config set pinataJwt --network devnet',
  ]

  static override args = {
    key: Args.string({description: 'setting name, e.g. rpcUrl', required: true}),
    value: Args.string({description: `its value (${SECRET_SETTINGS.join(', ')}: from standard input)`}),
  }

  static override flags = {...configScopeFlags}

  static mcp = {exclude: 'changes the settings the session runs with (its network is named once, at start)'}

  async run(): Promise<{file: string; scope: string; key: string; value: string | null}> {
    const {args, flags} = await this.parse(ConfigSet)
    const scope = configScope(flags.profile, flags.network)
    checkKey(args.key, scope)
    const hidden = isSecretSetting(args.key)
    if (hidden && args.value !== undefined) {
      throw new GpunetError('config_value_as_argument', `${args.key} is not taken as an argument`, {
        exitCode: ExitCode.USAGE,
        hint: `pipe it in: \`printf %s "$TOKEN" | gpunet config set ${args.key}\`; and clear it from your shell history`,
      })
    }
    if (!hidden && args.value === undefined) {
      throw new GpunetError('usage', `give the value of ${args.key}`, {
        exitCode: ExitCode.USAGE,
        hint: `gpunet config set ${args.key} VALUE`,
      })
    }
    const raw = hidden
      ? canPrompt()
        ? await askHidden(`${args.key}: `)
        : (await readStdin()).replace(/\r?\n$/, '')
      : args.value!
    const value = checkValue(args.key, raw)
    const document = readConfig(process.env)
    applySetting(document, scope, args.key, value)
    await writeConfig(document, process.env)
    const file = configFile(process.env)
    this.say(`${this.color('green', '✔')} Set ${args.key} in ${scopeName(scope)} (${file})`)
    return {file, scope: scopeName(scope), key: args.key, value: hidden ? null : value}
  }
}
