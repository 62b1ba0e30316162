import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand, writeLine} from '../../cli/base-command.js'
import {jobNodeFlags} from '../../cli/flags.js'
import {jobEndedBadly} from '../../lib/job/follow.js'
import {interruptible} from '../../lib/job/stop-signals.js'
import {jobLogs, type LogLine} from '../../lib/job/logs.js'
import {parseSince} from '../../lib/job/since.js'
import {parseAddress} from '../../lib/market/connect.js'
import {connectMarket} from '../../lib/network-connection.js'
import {printable} from '../../lib/text/terminal-text.js'
import {openWallet} from '../../lib/keys/wallet.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class JobLogs extends BaseCommand {
  static override summary = "Print a job's output: live from its node while it runs, from its result once it ended."

  static override description = withExitCodes(
    `A running job's lines come from its node's API (the localnet's node, or https://<node>.node.<network host> on devnet and mainnet), which only the job's poster may read: the wallet must be the one that posted it. An ended job's lines come from its result, which anyone may read. The job's standard output goes to stdout, its standard error to stderr (as it wrote them; a line whose stream the node does not say goes to stdout), what the node says of the job and gpunet's notices to stderr too. --timestamps puts each line's time (ISO 8601) before it; --tail N prints only the last N lines there are (with --follow: of the lines from before it started, printed once they stop coming for a second or a new one comes), then the new ones.

--follow prints lines as they come until the job ends (a QUEUED job is waited for), reconnecting when the connection drops. On the localnet every line is numbered, so none is printed twice after a reconnect; the network's nodes number nothing, so there gpunet drops replayed lines by their timestamps (best effort). Without --follow, a running job's lines so far are printed.

--json prints one JSON object per line on stdout, {"op", "stream", "time", "line"} ("stream" is null when the node does not say), and an {"error": ...} object last when the job failed.`,
    [
      [0, 'printed; the job succeeded (or is still running, without --follow)'],
      [2, 'usage: a bad flag, address or --since'],
      [5, 'the RPC node, content store or node API failed'],
      [6, "the node API refused: the wallet is not the job's poster"],
      [7, 'no job at that address; or the job is QUEUED (no logs yet) without --follow'],
      [8, 'the job ended failed'],
      [9, 'the job was stopped before it finished (its poster ended it, or its node gave it up)'],
      [129, 'SIGHUP (the job goes on)'],
      [130, 'Ctrl+C (the job goes on)'],
      [143, 'SIGTERM, as CI runners cancel (the job goes on)'],
    ],
  )

  static override examples = [
    '<%= config.bin %> job logs 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --follow',
    '<%= config.bin %> job logs 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --op train --since 10m',
    '<%= config.bin %> job logs 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --json | jq -r .line',
  ]

  static override args = {job: Args.string({description: 'job address', required: true})}

  static override flags = {
    follow: Flags.boolean({char: 'f', description: 'print lines as they come until the job ends'}),
    op: Flags.string({description: "only this operation's lines", helpValue: 'ID'}),
    timestamps: Flags.boolean({description: "put each line's time (ISO 8601, UTC) before it"}),
    tail: Flags.integer({
      description: 'only the last N lines there are (with --follow, then every new one)',
      min: 0,
      helpValue: 'N',
    }),
    since: Flags.string({
      description: 'only lines from this long ago (30s, 5m, 1h30m, 2d) or this time (ISO 8601) on',
      helpValue: 'DURATION',
    }),
    ...jobNodeFlags,
  }

  /** Under --json the output is JSON lines: the error document is the last line, on one line. */
  static override jsonLines = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(JobLogs)
    const {network} = this.settings
    const job = parseAddress(args.job, 'the job')
    const sinceMs = flags.since === undefined ? undefined : parseSince(flags.since)
    const json = this.jsonEnabled()
    // Notices carry what the node says: stripped of control sequences on a terminal.
    const note = (line: string) => this.note(printable(line, process.stderr))
    const net = await connectMarket(this.settings, note)
    // Lines are written as they come (not through `say`, which buffers nothing but formats for one document); the
    // job's stderr lines go to stderr, as a process's own would.
    const stamp = (entry: LogLine) => (flags.timestamps ? `${entry.time} ${entry.line}` : entry.line)
    const print = json
      ? (entry: LogLine) => writeLine(JSON.stringify(entry))
      : (entry: LogLine) =>
          entry.stream === 'stderr'
            ? void process.stderr.write(`${printable(stamp(entry), process.stderr)}\n`)
            : writeLine(printable(stamp(entry), process.stdout))
    const tail = flags.tail === undefined ? null : lastLines(flags.tail, flags.follow, print)
    const line = tail ? tail.line : print
    const end = await interruptible((signal) =>
      jobLogs(net, job, {
        follow: flags.follow,
        op: flags.op,
        sinceMs,
        wallet: () => openWallet(this.settings, {create: false}),
        line,
        notice: note,
        signal,
      }),
    )
    await tail?.flush()
    if (!end.report) return
    const failure = jobEndedBadly(network, end.report)
    if (failure) throw failure
  }
}

/** How long --tail --follow waits for more of the lines from before it started, before printing the last of them. */
const TAIL_SETTLE_MS = 1000

/**
 * `--tail N`: the last N of the lines there are. Without --follow every line is one of them (printed at `flush`);
 * with it, those timed before the command started are, printed once a newer line comes or none came for a second:
 * a node replays its history first and marks no end of it.
 */
function lastLines(count: number, follow: boolean, print: (entry: LogLine) => void | Promise<void>) {
  const startedMs = Date.now()
  let held: LogLine[] | null = []
  let timer: NodeJS.Timeout | undefined
  let flushing: Promise<void> | undefined
  // Once: the lines held are printed before any that comes after.
  const flush = () =>
    (flushing ??= (async () => {
      clearTimeout(timer)
      const lines = held ? held.slice(held.length - Math.min(count, held.length)) : []
      held = null
      for (const entry of lines) await print(entry)
    })())
  const line = async (entry: LogLine) => {
    if (held && !flushing && (!follow || !(Date.parse(entry.time) >= startedMs))) {
      held.push(entry)
      // Kept short: a long history is cut down now and then, not line by line.
      if (held.length > 2 * count + 1000) held = held.slice(held.length - count)
      if (follow) {
        clearTimeout(timer)
        timer = setTimeout(() => void flush(), TAIL_SETTLE_MS).unref()
      }
      return
    }
    await flush()
    return print(entry)
  }
  return {line, flush}
}
