import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {
  type LocalnetStatus,
  localnetStatus,
  runningLocalnet,
  startInBackground,
} from '../../lib/localnet/server/control.js'
import {
  contentMaxBytesFlag,
  dataDirFlag,
  drainTimeoutFlag,
  holdTimeoutFlag,
  idsFlag,
  maxHeldFlag,
  marketsFlag,
  nodeFlags,
  nodesFlag,
  portFlag,
} from '../../cli/localnet-flags.js'
import {
  contentMaxBytes,
  drainTimeoutMs,
  idsInForce,
  marketsFile,
  nodeOptions,
  startArgs,
  tokenUsd,
} from '../../lib/localnet/server/start-settings.js'
import {readMarketsFile} from '../../lib/localnet/markets/markets-file.js'
import {checkMarketsGiven} from '../../lib/localnet/markets/record.js'
import {statusLines} from '../../lib/localnet/server/format.js'
import {reclaimedLines} from '../../lib/localnet/nodes/node-agent.js'
import {localnetFiles} from '../../lib/localnet/paths.js'
import {cooldownsFromSettings} from '../../lib/deployments/cooldowns.js'
import type {LocalnetIds} from '../../lib/settings/kinds.js'
import {serveUntilSignal} from '../../lib/localnet/server/serve.js'
import {SETTING_KEYS, SETTINGS} from '../../lib/settings/catalog.js'
import {walletPath} from '../../lib/settings/settings.js'
import {type StartDifference, startDifferences} from '../../lib/localnet/server/start-args.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'

export default class LocalnetStart extends BaseCommand {
  static override summary =
    'Start the localnet: Solana JSON-RPC, the jobs program, a faucet and a content store on 127.0.0.1.'
  static override description = `Runs in the foreground until Ctrl+C, or in the background with --detach. The first start creates a payment token (6 decimals), a default market and funds your wallet; later starts resume the saved chain. With --json, prints the status document once the localnet answers. Does nothing when a localnet already serves the data directory with the flags given; one given that it does not run with (--pull never on a localnet pulling missing images, another --nodes, --no-node...) is refused, exit 2: stop it first (\`gpunet localnet stop\`, the chain is kept), then start it again with them.

Its markets (--markets FILE, YAML or JSON; three default markets of different GPUs, VRAM, types and prices otherwise) are opened with the jobs program's own \`open\` and kept with the chain: a file with other markets for a chain that exists is refused (exit 2; \`gpunet localnet reset --markets FILE\` makes a new chain with them). Each market runs its own nodes, each taking only that market's jobs. Its node agents (on unless --no-node; --nodes N runs N of them in the default market, each with its own key and one job at a time) take the jobs posted to their market, runs them in podman containers and serves their exposed ports through the one gateway at http://<job>.node.localhost:<gateway port>/; a deployment's replicas answer together at http://<deployment>.deploy.localhost:<gateway port>/.`

  static override examples = [
    '<%= config.bin %> localnet start',
    '<%= config.bin %> localnet start --detach',
    '<%= config.bin %> localnet start --detach --port 0 --data-dir /tmp/gpunet-localnet --json',
    '<%= config.bin %> localnet start --no-node',
    '<%= config.bin %> localnet start --host-processes --gateway-port 0',
    '<%= config.bin %> localnet start --detach --nodes 4',
    '<%= config.bin %> localnet start --detach --markets markets.yaml',
    '<%= config.bin %> localnet start --detach --drain-timeout 30m',
    '<%= config.bin %> localnet start --detach --hold-timeout 10m --max-held 20',
    '<%= config.bin %> localnet stop && <%= config.bin %> localnet start --detach --pull never',
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
    markets: marketsFlag,
    'drain-timeout': drainTimeoutFlag,
    'max-held': maxHeldFlag,
    'hold-timeout': holdTimeoutFlag,
  }

  static mcp = {exclude: 'a server that never returns (the localnet runs in it); the tools start a localnet on demand'}

  async run(): Promise<LocalnetStatus | undefined> {
    const {flags, metadata} = await this.parse(LocalnetStart)
    const {settings} = this
    const {dataDir, port} = settings.localnet
    const ids = idsInForce(settings)
    const hostProcesses = settings.typed('nodeHostProcesses')?.value ?? false
    const args = startArgs(settings, flags.node)
    // A bad cooldown setting of its manager is exit 2 before anything starts (in the background too).
    const cooldowns = cooldownsFromSettings(settings)
    // A bad markets file, or one a kept chain does not have, is refused before anything starts.
    const file = marketsFile(settings)
    const markets = file === undefined ? undefined : await readMarketsFile(file)
    if (file !== undefined && markets) checkMarketsGiven(dataDir, markets, file)
    const running = await runningLocalnet(dataDir)
    if (running) {
      // A setting (a flag, its variable, a profile's or the config file's) that the running localnet does not
      // honour is refused, not dropped: the user would believe it applied.
      const given = new Set(metadata.flags.node?.setFromDefault ? [] : ['node'])
      for (const key of SETTING_KEYS) {
        const flag = (SETTINGS[key] as {flag?: string}).flag
        const found = settings.get(key)
        if (flag && found && found.from !== 'preset') given.add(flag.slice(2))
      }
      const gatewayPort = running.gatewayUrl ? Number(new URL(running.gatewayUrl).port) : null
      const gatewayHttpsPort = running.gatewayHttpsUrl ? Number(new URL(running.gatewayHttpsUrl).port) : null
      const differences = startDifferences(
        {args: running.startArgs ?? [], port: Number(new URL(running.rpcUrl).port), gatewayPort, gatewayHttpsPort},
        {args, port, given},
      )
      if (differences.length > 0) throw runsOtherwise(dataDir, running.pid, differences)
      this.note(`A localnet already serves ${dataDir}.`)
      return this.report(await localnetStatus(dataDir, running), 'running', hostProcesses, ids)
    }
    if (flags.detach) {
      await startInBackground(dataDir, port, [...args, ...(ids ? ['--ids', ids] : [])])
      for (const line of reclaimedLines(localnetFiles(dataDir).log, dataDir)) this.note(line)
      return this.report(await localnetStatus(dataDir), 'started in the background', hostProcesses, ids)
    }
    const walletFile = walletPath(settings).file
    const node = nodeOptions(settings, flags.node, (line) =>
      process.stderr.write(`${new Date().toISOString()} ${line}\n`),
    )
    const serve = {
      dataDir,
      port,
      node,
      contentMaxBytes: contentMaxBytes(settings),
      startArgs: args,
      ids,
      walletFile,
      allowedOrigins: settings.typed('allowOrigin')?.value,
      tunnelGraceMs: settings.typed('tunnelGrace')?.value,
      drainTimeoutMs: drainTimeoutMs(settings),
      secretsKey: settings.value('secretsKey'),
      cooldowns,
      markets,
      tokenUsd: tokenUsd(settings),
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

/** The refusal of a second start whose flags the running localnet does not run with. */
function runsOtherwise(dataDir: string, pid: number, differences: StartDifference[]): GpunetError {
  const said = differences.map((d) => `${d.given} (it runs with ${d.running})`).join(', ')
  return new GpunetError(
    'localnet_running_otherwise',
    `a localnet (pid ${pid}) already serves ${dataDir} without what was asked: ${said}`,
    {
      exitCode: ExitCode.USAGE,
      hint: `stop it first (\`gpunet localnet stop\`; its chain is kept), then start it again with ${differences.map((d) => d.given).join(' ')}; or leave ${differences.length === 1 ? 'that flag' : 'those flags'} out to use it as it runs`,
      fields: {dataDir, pid, differences: differences.map((d) => ({...d}))},
    },
  )
}
