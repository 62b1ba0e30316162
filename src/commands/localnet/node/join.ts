import * as Args from '@oclif/core/args'

import {BaseCommand} from '../../../cli/base-command.js'
import {dataDirFlag} from '../../../cli/localnet-flags.js'
import type {LocalnetNodeEntry} from '../../../lib/localnet/nodes/node-agent.js'
import {changeLocalnetNode} from '../../../lib/localnet/server/node-actions.js'

export default class LocalnetNodeJoin extends BaseCommand {
  static override summary =
    'Put a localnet node that left back in its market: it takes the job at the head of the queue, or waits for one.'
  static override description = `The undo of \`gpunet localnet node leave NODE\`. NODE is an address \`gpunet localnet status\` lists. --json prints the node's entry.`

  static override examples = ['<%= config.bin %> localnet node join 96rRjqRFkBP33xuyjAi3KQLZS7wnKLpphEUZwzfmcjMB']

  static override settingsNetwork = 'localnet' as const

  static override args = {node: Args.string({description: "the node's address", required: true})}
  static override flags = {'data-dir': dataDirFlag}

  async run(): Promise<LocalnetNodeEntry> {
    const {args} = await this.parse(LocalnetNodeJoin)
    const entry = await changeLocalnetNode(this.settings.localnet.dataDir, args.node, 'join')
    this.say(`Node ${entry.address} joined its market again (${entry.slug}).`)
    return entry
  }
}
