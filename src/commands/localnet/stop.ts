import {BaseCommand} from '../../cli/base-command.js'
import {stopLocalnet} from '../../lib/localnet/control.js'
import {dataDirFlag} from '../../cli/localnet-flags.js'

export default class LocalnetStop extends BaseCommand {
  static override summary = 'Stop the localnet; its chain and content stay in the data directory for the next start.'
  static override description = 'Does nothing (and exits 0) when no localnet runs for the data directory.'

  static override examples = [
    '<%= config.bin %> localnet stop',
    '<%= config.bin %> localnet stop --data-dir /tmp/gpunet-localnet',
  ]

  static override settingsNetwork = 'localnet' as const

  static override flags = {'data-dir': dataDirFlag}

  async run(): Promise<{stopped: boolean; pid: number | null; dataDir: string}> {
    await this.parse(LocalnetStop)
    const {dataDir} = this.settings.localnet
    const pid = await stopLocalnet(dataDir)
    this.say(
      pid === null
        ? `No localnet is running for ${dataDir}.`
        : `Stopped the localnet (pid ${pid}); its state is kept in ${dataDir}.`,
    )
    return {stopped: pid !== null, pid, dataDir}
  }
}
