import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {type LocalnetStatus, localnetStatus, runningLocalnet, startInBackground} from '../../lib/localnet/control.js'
import {contentMaxBytesFlag, dataDirFlag, idsFlag, nodeFlags, nodesFlag, portFlag} from '../../cli/localnet-flags.js'
import {contentMaxBytes, idsInForce, nodeOptions, startArgs} from '../../lib/localnet/start-settings.js'
import {statusLines} from '../../lib/localnet/format.js'
import {reclaimedLines} from '../../lib/localnet/node-agent.js'
import {localnetFiles} from '../../lib/localnet/paths.js'
import type {LocalnetIds} from '../../lib/settings/kinds.js'
import {serveUntilSignal} from '../../lib/localnet/serve.js'
import {walletPath} from '../../lib/settings/settings.js'

export default class LocalnetStart extends BaseCommand {
  static override summary =
    'Start the localnet: Solana JSON-RPC, the jobs program, a faucet and a content store on 127.0.0.1.'
  static override description = `Runs in the foreground until Ctrl+C, or in the background with --detach. The first start creates a payment token (6 decimals), a default market and funds your wallet; later starts resume the saved chain. With --json, prints the status document once the localnet answers. Does nothing when a localnet already serves the data directory.

Its node agent (on unless --no-node; --nodes N runs N of them, each with its own key and one job at a time) takes the jobs posted to the default market, runs them in podman containers and serves their exposed ports through the one gateway at http://<job>.node.localhost:<gateway port>/; a deployment's replicas answer together at http://<deployment>.deploy.localhost:<gateway port>/.`

  static override examples = [
    '<%= config.bin %> localnet start',
    '<%= config.bin %> localnet start --detach',
    '<%= config.bin %> localnet start --detach --port 0 --data-dir /tmp/gpunet-localnet --json',
    '<%= config.bin %> localnet start --no-node',
    '<%= config.bin %> localnet start --host-processes --gateway-port 0',
    '<%= config.bin %> localnet start --detach --nodes 4',
  ]

  static override settingsNetwork = 'localnet' as const

  static override flags = {
    detach: Flags.boolean({char: 'd', description: 'start in the background and return once it answers'}),
    'data-dir': dataDirFlag,
    port: portFlag,
    ids: idsFlag,
    'content-max-bytes': contentMaxBytesFlag,
    ...nodeFlags,
    nodes: nodesFlag,
  }

  async run(): Promise<LocalnetStatus | undefined> {
    const {flags} = await this.parse(LocalnetStart)
    const {settings} = this
    const {dataDir, port} = settings.localnet
    const ids = idsInForce(settings)
    const hostProcesses = settings.typed('nodeHostProcesses')?.value ?? false
    const node = nodeOptions(settings, flags.node, (line) =>
      process.stderr.write(`${new Date().toISOString()} ${line}\n`),
    )
    if (await runningLocalnet(dataDir)) {
      this.note(`A localnet already serves ${dataDir}.`)
      return this.report(await localnetStatus(dataDir), 'running', hostProcesses, ids)
    }
    const args = startArgs(settings, flags.node)
    if (flags.detach) {
      await startInBackground(dataDir, port, [...args, ...(ids ? ['--ids', ids] : [])])
      for (const line of reclaimedLines(localnetFiles(dataDir).log, dataDir)) this.note(line)
      return this.report(await localnetStatus(dataDir), 'started in the background', hostProcesses, ids)
    }
    const walletFile = walletPath(settings).file
    const serve = {
      dataDir,
      port,
      node,
      contentMaxBytes: contentMaxBytes(settings),
      startArgs: args,
      ids,
      walletFile,
      allowedOrigins: settings.typed('allowOrigin')?.value,
      secretsKey: settings.value('secretsKey'),
    }
    await serveUntilSignal(serve, async () => {
      const status = await localnetStatus(dataDir)
      if (this.jsonEnabled()) this.logJson(status)
      else this.report(status, 'running', hostProcesses, ids)
      this.note('Press Ctrl+C to stop; the chain is saved in the data directory.')
    })
    this.note('Localnet stopped.')
    return undefined
  }

  private report(
    status: LocalnetStatus,
    state: string,
    hostProcesses: boolean,
    ids: LocalnetIds | undefined,
  ): LocalnetStatus {
    this.say(`Localnet ${state} (pid ${status.pid})`)
    for (const line of statusLines(status)) this.say(line)
    if (ids && status.ids && status.ids !== ids) {
      this.note(
        `Note: this chain was created with ${status.ids} ids and keeps them; ${ids} ids apply to a new chain (\`gpunet localnet reset --ids ${ids}\`).`,
      )
    }
    const note = runtimeNote(status, hostProcesses)
    if (note) this.note(note)
    return status
  }
}

/** What the user should know of how the node runs jobs: none isolated, or a --host-processes that had no effect. */
function runtimeNote(status: LocalnetStatus, hostProcesses: boolean): string | null {
  const runtime = status.node && 'runtime' in status.node ? status.node.runtime : undefined
  if (runtime === 'host-process') {
    return 'Warning: the node runs jobs as host processes on this machine, with NO isolation, and without their images.'
  }
  if (runtime === 'podman' && hostProcesses) {
    return 'Note: --host-processes is only a fallback for when podman cannot run; podman works here, so jobs run in podman. `--runtime host` runs them on the host (no isolation).'
  }
  return null
}
