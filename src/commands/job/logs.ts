import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand, writeLine} from '../../base-command.js'
import {jobNodeFlags} from '../../flags.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {jobEndedBadly} from '../../lib/job/follow.js'
import {interruptible} from '../../lib/job/stop-signals.js'
import {jobLogs, type LogLine} from '../../lib/job/logs.js'
import {parseSince} from '../../lib/job/since.js'
import {parseAddress} from '../../lib/market/connect.js'
import {connectMarket} from '../../lib/network-connection.js'
import {printable} from '../../lib/terminal-text.js'
import {openWallet} from '../../lib/settings.js'

export default class JobLogs extends BaseCommand {
  static override summary = "Print a job's output: live from its node while it runs, from its result once it ended."

  static override description = `A running job's lines come from its node's API (the localnet's node, or https://<node>.node.<network host> on devnet and mainnet), which only the job's poster may read: the wallet must be the one that posted it. An ended job's lines come from its result, which anyone may read. Container output goes to stdout, what the node says of the job and gpunet's notices to stderr.

--follow prints lines as they come until the job ends (a QUEUED job is waited for), reconnecting when the connection drops. On the localnet every line is numbered, so none is printed twice after a reconnect; the network's nodes number nothing, so there gpunet drops replayed lines by their timestamps (best effort). Without --follow, a running job's lines so far are printed.

--json prints one JSON object per line on stdout, {"op", "stream", "time", "line"} ("stream" is null when the node does not say), and an {"error": ...} object last when the job failed.

EXIT CODES
  0    printed; the job succeeded (or is still running, without --follow)
  2    usage: a bad flag, address or --since
  5    the RPC node, content store or node API failed
  6    the node API refused: the wallet is not the job's poster
  7    no job at that address; or the job is QUEUED (no logs yet) without --follow
  8    the job ended failed
  9    the job was stopped before it finished (its poster ended it, or its node gave it up)
  129  SIGHUP (the job goes on)
  130  Ctrl+C (the job goes on)
  143  SIGTERM, as CI runners cancel (the job goes on)`

  static override examples = [
    '<%= config.bin %> job logs 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --follow',
    '<%= config.bin %> job logs 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --op train --since 10m',
    '<%= config.bin %> job logs 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --json | jq -r .line',
  ]

  static override args = {job: Args.string({description: 'job address', required: true})}

  static override flags = {
    follow: Flags.boolean({char: 'f', description: 'print lines as they come until the job ends'}),
    op: Flags.string({description: "only this operation's lines", helpValue: 'ID'}),
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
    // Lines are written as they come (not through `say`, which buffers nothing but formats for one document).
    const line = json
      ? (entry: LogLine) => writeLine(JSON.stringify(entry))
      : (entry: LogLine) => writeLine(printable(entry.line, process.stdout))
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
    if (!end.report) return
    const failure = jobEndedBadly(network, end.report)
    if (failure?.code === 'job_stopped') {
      throw new GpunetError(failure.code, failure.message, {
        exitCode: ExitCode.JOB_STOPPED,
        hint: failure.hint,
        fields: failure.fields,
      })
    }
    if (failure) throw failure
  }
}
