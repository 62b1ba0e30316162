import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {jobNodeFlags} from '../../cli/flags.js'
import {jobStats, statsTable} from '../../lib/job/stats.js'
import {interruptible} from '../../lib/job/stop-signals.js'
import {parseAddress} from '../../lib/market/connect.js'
import {connectMarket} from '../../lib/network-connection.js'
import type {TaskStat} from '../../lib/node-api/stats-protocol.js'
import {openWallet} from '../../lib/keys/wallet.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class JobStats extends BaseCommand {
  static override summary = "Show a running job's CPU, memory, disk and network use per operation, from its node."

  static override description = withExitCodes(
    `The figures come from the node's API (GET /job/<job>/stats, and its server-sent stream with --follow), which only the job's poster may read. CPU is in percent of one core. On the localnet, a container's figures come from podman stats, a host process's from /proc (its network is "-": a host process shares the host's network, whose totals are not the job's); a figure the node does not know is "-" in the table and null in JSON.

On a terminal the table is redrawn in place; otherwise, and with --json, each operation's figures are one JSON object per line (the network's TaskStat): {"opId", "timestamp", "cpu": {"cpu_percent"}, "memory": {...}, "disk": {"read", "write"}, "network": {"received", "sent"}}.`,
    [
      [0, 'shown; with --follow, the job ended on its node'],
      [2, 'usage: a bad flag or address'],
      [5, 'the node API could not be reached'],
      [6, "the node API refused: the wallet is not the job's poster"],
      [7, 'the job is not running'],
    ],
  )

  static override examples = [
    '<%= config.bin %> job stats 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a',
    '<%= config.bin %> job stats 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --follow --interval 5',
    '<%= config.bin %> job stats 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --json | jq .cpu.cpu_percent',
  ]

  static override args = {job: Args.string({description: 'job address', required: true})}

  static override flags = {
    follow: Flags.boolean({char: 'f', description: 'show new figures every interval until the job ends'}),
    interval: Flags.integer({description: 'seconds between figures with --follow', min: 1, max: 3600, default: 2}),
    ...jobNodeFlags,
  }

  /** Under --json the output is JSON lines: the error document is the last line, on one line. */
  static override jsonLines = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(JobStats)
    const job = parseAddress(args.job, 'the job')
    const net = await connectMarket(this.settings, (line) => this.note(line))
    const table = !this.jsonEnabled() && process.stdout.isTTY === true
    let drawn = 0
    const frame = (stats: TaskStat[]) => {
      if (!table) {
        process.stdout.write(stats.map((s) => `${JSON.stringify(s)}\n`).join(''))
        return
      }
      const lines = statsTable(stats)
      // Up over the last table and clear to the end of the screen, so it is redrawn in place.
      const clear = drawn > 0 ? `\x1b[${drawn}A\x1b[J` : ''
      process.stdout.write(`${clear}${lines.join('\n')}\n`)
      drawn = lines.length
    }
    await interruptible((signal) =>
      jobStats(net, job, {
        follow: flags.follow,
        intervalS: flags.follow ? flags.interval : undefined,
        wallet: () => openWallet(this.settings, {create: false}),
        frame,
        signal,
      }),
    )
  }
}
