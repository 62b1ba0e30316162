import * as Args from '@oclif/core/args'

import {BaseCommand} from '../../../cli/base-command.js'
import {dataDirFlag} from '../../../cli/localnet-flags.js'
import type {LocalnetNodeEntry} from '../../../lib/localnet/nodes/node-agent.js'
import {changeLocalnetNode} from '../../../lib/localnet/server/node-actions.js'

export default class LocalnetNodeLeave extends BaseCommand {
  static override summary =
    "Take a localnet node out of its market's queue: it finishes the job it runs and takes no other until it joins."
  static override description = `As a node of the network going offline: its market's free nodes (market list, /reservations/gpus) count one fewer, and a job posted there waits for another node. \`gpunet localnet node join NODE\` puts it back. NODE is an address \`gpunet localnet status\` lists. A node left stays left until it joins or the localnet restarts. --json prints the node's entry.`

  static override examples = ['<%= config.bin %> localnet node leave 96rRjqRFkBP33xuyjAi3KQLZS7wnKLpphEUZwzfmcjMB']

  static override settingsNetwork = 'localnet' as const

  static override args = {node: Args.string({description: "the node's address", required: true})}
  static override flags = {'data-dir': dataDirFlag}

  async run(): Promise<LocalnetNodeEntry> {
    const {args} = await this.parse(LocalnetNodeLeave)
    const entry = await changeLocalnetNode(this.settings.localnet.dataDir, args.node, 'leave')
    this.say(`Node ${entry.address} left its market (${entry.slug}).`)
    return entry
  }
}
