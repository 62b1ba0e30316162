import {BaseCommand} from '../../cli/base-command.js'
import {ExitCode} from '../../lib/errors.js'
import {type LocalnetStatus, localnetStatus} from '../../lib/localnet/server/control.js'
import {dataDirFlag} from '../../cli/localnet-flags.js'
import {statusLines} from '../../lib/localnet/server/format.js'

export default class LocalnetStatusCommand extends BaseCommand {
  static override summary = 'Show whether the localnet runs, with its URLs, market, token mint and program id.'
  static override description = `Exits 0 when the localnet runs and answers, 7 when it does not (the status is printed either way). "secretsUrl" and "gatewayUrl" are null until those services are part of the localnet. "gatewayHttpsUrl" is the gateway over https, signed by the localnet's own certificate authority, whose file is "caCertificate" (trust it with NODE_EXTRA_CA_CERTS=<file> or curl --cacert <file>); "frpServerAddress" has the host and port of each ({http, https}), which a client that builds <hash>.<address> itself (FRP_SERVER_ADDRESS) takes.`

  static override examples = [
    '<%= config.bin %> localnet status',
    '<%= config.bin %> localnet status --json | jq -r .rpcUrl',
  ]

  static override settingsNetwork = 'localnet' as const

  static override flags = {'data-dir': dataDirFlag}

  async run(): Promise<LocalnetStatus> {
    await this.parse(LocalnetStatusCommand)
    const status = await localnetStatus(this.settings.localnet.dataDir)
    if (status.running) {
      this.say(`Localnet running (pid ${status.pid}) since ${status.startedAt}`)
    } else {
      this.say(`No localnet is running for ${status.dataDir}.`)
      this.setExitCode(ExitCode.NOT_FOUND)
    }
    for (const line of statusLines(status)) this.say(line)
    if (!status.running) this.say(this.color('dim', 'Start it with "gpunet localnet start --detach".'))
    return status
  }
}
