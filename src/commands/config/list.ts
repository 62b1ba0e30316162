import {BaseCommand} from '../../cli/base-command.js'
import {SECRET_SETTINGS} from '../../lib/settings/catalog.js'
import {marketFlags} from '../../cli/flags.js'
import {type SettingInForce, settingsInForce} from '../../lib/settings/config-settings.js'
import {reportLines} from '../../lib/market/jobs/report.js'
import type {Network} from '../../lib/network.js'

interface ListReport {
  file: string
  network: Network
  profile: string | null
  settings: SettingInForce[]
  profiles: {name: string; network: string}[]
}

export default class ConfigList extends BaseCommand {
  static override summary = 'Show every setting in force and where each comes from.'
  static override description = `Precedence, highest first: a command's flag > environment variable (GPUNET_*) > profile (--profile, GPUNET_PROFILE) > config file (its "networks" section for the network) > the network's preset. Credentials (${SECRET_SETTINGS.join(', ')}) show only whether they are set.`

  static override examples = [
    '<%= config.bin %> config list',
    '<%= config.bin %> config list --network devnet',
    '<%= config.bin %> config list --profile prod --json',
  ]

  static override flags = {network: marketFlags.network, profile: marketFlags.profile}

  async run(): Promise<ListReport> {
    await this.parse(ConfigList)
    const {settings} = this
    const {network} = settings
    const report: ListReport = {
      file: settings.configFile,
      network,
      profile: settings.profile,
      settings: settingsInForce(settings),
      profiles: settings.profiles,
    }
    this.say(`Settings for ${network}${report.profile ? ` (profile ${report.profile})` : ''}, from ${report.file}`)
    const rows: [string, string | null][] = report.settings.map((setting) => [
      setting.key,
      setting.set ? `${setting.value ?? '(set, hidden)'}  [${setting.source}]` : `-  [${setting.env}]`,
    ])
    for (const line of reportLines(rows)) this.say(line)
    if (report.profiles.length > 0) {
      this.say(`Profiles: ${report.profiles.map(({name, network: net}) => `${name} (${net})`).join(', ')}`)
    }
    return report
  }
}
