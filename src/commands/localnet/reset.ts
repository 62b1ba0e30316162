import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {localnetStatus, resetLocalnet, runningLocalnet, startInBackground} from '../../lib/localnet/server/control.js'
import {dataDirFlag, idsFlag} from '../../cli/localnet-flags.js'
import {DEFAULT_PORT} from '../../lib/settings/presets.js'
import {confirmUndoable} from '../../lib/terminal/prompt.js'

export default class LocalnetReset extends BaseCommand {
  static override summary = 'Wipe the localnet: chain, content store and faucet; the next start creates a fresh one.'
  static override description = `Asks first at a terminal, unless --yes; without a terminal (scripts, CI) it refuses (exit 2) unless --yes. A running localnet is stopped first and started again, fresh, on the same port and with the node flags it was started with (printed, and startArgs under --json), and with the ids of the chain it wiped unless --ids names others. Your wallet file is kept (it lives outside the data directory) and is funded again by the fresh localnet.`

  static override examples = ['<%= config.bin %> localnet reset', '<%= config.bin %> localnet reset --yes --json']

  static override settingsNetwork = 'localnet' as const

  static override flags = {
    'data-dir': dataDirFlag,
    yes: Flags.boolean({char: 'y', description: 'wipe without asking (needed without a terminal)'}),
    ids: idsFlag,
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
    const existed = await resetLocalnet(dataDir)
    this.say(existed ? `Wiped the localnet in ${dataDir}.` : `There was no localnet in ${dataDir}.`)
    if (!running) return {reset: existed, restarted: false, dataDir, rpcUrl: null, startArgs: null}
    const port = Number(new URL(running.rpcUrl).port) || DEFAULT_PORT
    // Started again as it was: its GPUs, host processes, gateway port and pull policy stay what they were.
    const startArgs = [...withoutIds(running.startArgs ?? []), ...(ids ? ['--ids', ids] : [])]
    const fresh = await startInBackground(dataDir, port, startArgs)
    this.say(
      `Started a fresh localnet at ${fresh.rpcUrl}${startArgs.length > 0 ? ` with ${startArgs.join(' ')}` : ''}.`,
    )
    return {reset: existed, restarted: true, dataDir, rpcUrl: fresh.rpcUrl, startArgs}
  }
}

/** Start flags without an `--ids` and its value. */
function withoutIds(args: string[]): string[] {
  const at = args.indexOf('--ids')
  return at === -1 ? args : [...args.slice(0, at), ...args.slice(at + 2)]
}
