import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {localnetStatus, resetLocalnet, runningLocalnet, startInBackground} from '../../lib/localnet/server/control.js'
import {dataDirFlag, idsFlag, marketsFlag} from '../../cli/localnet-flags.js'
import {readMarketsFile} from '../../lib/localnet/markets/markets-file.js'
import {keepMarkets, keptMarkets} from '../../lib/localnet/markets/record.js'
import {marketsFile} from '../../lib/localnet/server/start-settings.js'
import {DEFAULT_PORT} from '../../lib/settings/presets.js'
import {confirmUndoable} from '../../lib/terminal/prompt.js'

export default class LocalnetReset extends BaseCommand {
  static override summary = 'Wipe the localnet: chain, content store and faucet; the next start creates a fresh one.'
  static override description = `Asks first at a terminal, unless --yes; without a terminal (scripts, CI) it refuses (exit 2) unless --yes. A running localnet is stopped first and started again, fresh, on the same port and with the node flags it was started with (printed, and startArgs under --json), and with the ids of the chain it wiped unless --ids names others. The fresh chain opens the markets the wiped one had, unless --markets gives others (a bad file is refused before anything is wiped). Your wallet file is kept (it lives outside the data directory) and is funded again by the fresh localnet.`

  static override examples = ['<%= config.bin %> localnet reset', '<%= config.bin %> localnet reset --yes --json']

  static override settingsNetwork = 'localnet' as const

  static override flags = {
    'data-dir': dataDirFlag,
    yes: Flags.boolean({char: 'y', description: 'wipe without asking (needed without a terminal)'}),
    ids: idsFlag,
    markets: marketsFlag,
  }

  static paysOrDestroys = {what: 'destroys'} as const

  async run(): Promise<{
    reset: boolean
    restarted: boolean
    dataDir: string
    rpcUrl: string | null
    startArgs: string[] | null
  }> {
    const {flags} = await this.parse(LocalnetReset)
    const {dataDir} = this.settings.localnet
    // Read (and checked) before anything is wiped: the fresh chain opens these, or the markets the old one had.
    const file = marketsFile(this.settings)
    const given = file === undefined ? undefined : await readMarketsFile(file)
    if (!flags.yes) {
      await confirmUndoable({
        question: `Wipe the localnet in ${dataDir} (chain, content store, faucet, secrets)?`,
        doing: `wipe the localnet in ${dataDir}`,
        short: 'wipe it',
        spared: 'Cancelled: nothing was wiped.',
      })
    }
    const running = await runningLocalnet(dataDir)
    // The fresh chain keeps the ids of the one wiped, unless --ids says otherwise.
    const ids = flags.ids ?? (await localnetStatus(dataDir, running)).ids
    const kept = given ?? keptMarkets(dataDir)
    const existed = await resetLocalnet(dataDir)
    // A directory that held no localnet is left as it was: its first start takes a markets file itself.
    if (kept && existed) keepMarkets(dataDir, kept)
    this.say(existed ? `Wiped the localnet in ${dataDir}.` : `There was no localnet in ${dataDir}.`)
    if (!running) return {reset: existed, restarted: false, dataDir, rpcUrl: null, startArgs: null}
    const port = Number(new URL(running.rpcUrl).port) || DEFAULT_PORT
    // Started again as it was: its GPUs, host processes, gateway port and pull policy stay what they were.
    // Without --markets: the data directory holds the markets the fresh chain opens.
    const startArgs = [
      ...without(without(running.startArgs ?? [], '--ids'), '--markets'),
      ...(ids ? ['--ids', ids] : []),
    ]
    const fresh = await startInBackground(dataDir, port, startArgs)
    this.say(
      `Started a fresh localnet at ${fresh.rpcUrl}${startArgs.length > 0 ? ` with ${startArgs.join(' ')}` : ''}.`,
    )
    return {reset: existed, restarted: true, dataDir, rpcUrl: fresh.rpcUrl, startArgs}
  }
}

/** Start flags without `flag` and its value. */
function without(args: string[], flag: string): string[] {
  const at = args.indexOf(flag)
  return at === -1 ? args : [...args.slice(0, at), ...args.slice(at + 2)]
}
