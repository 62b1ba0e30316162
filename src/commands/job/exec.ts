import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {jobNodeFlags, splitCommand} from '../../cli/flags.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {runJobExec} from '../../lib/job/node-connection.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class JobExec extends BaseCommand {
  static override summary =
    "Run a command inside a running job's operation, with its stdin, stdout, stderr and exit code."

  static override description = withExitCodes(
    `The command runs in the operation's container (podman exec), or beside its processes with its folder and environment when the node runs jobs as host processes. Only the job's poster may: the wallet signs the request for the action "exec". stdin is passed through (its end closes the command's stdin), stdout and stderr stay apart, and gpunet exits with the command's exit code.

This uses gpunet's own /exec route of the node API, which the localnet's nodes serve; the network's nodes serve none (they serve a terminal: \`job shell\`; docs/exec.md), so on devnet and mainnet this fails with exit 5.`,
    [
      ['N', 'the command ran and exited with N'],
      [2, 'usage: a bad flag or address, or no command after --'],
      [5, 'the node API could not be reached, or offers no /exec'],
      [6, "the node API refused: the wallet is not the job's poster"],
      [7, 'the job is not running, or no such operation runs in it'],
    ],
  )

  static override examples = [
    '<%= config.bin %> job exec 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a -- ls -la /data',
    "<%= config.bin %> job exec 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --op train -- sh -c 'nvidia-smi; df -h'",
    'tar c ./fixtures | <%= config.bin %> job exec 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a -- tar x -C /tmp',
  ]

  static override args = {job: Args.string({description: 'job address', required: true})}

  // Not strict: the command's words come from this.argv after --, never from oclif's leftovers.
  static override strict = false

  static override flags = {
    op: Flags.string({description: 'the operation to run in (needed when several run)', helpValue: 'ID'}),
    ...jobNodeFlags,
  }

  static mcp = {exclude: "streams a process's raw standard input and output, not a JSON document"}

  async run(): Promise<void> {
    const {flagWords, command} = splitCommand(this.argv)
    const {args, flags, argv: stray} = await this.parse(JobExec, flagWords)
    if (stray.length > 1 || command.length === 0) {
      throw new GpunetError('usage', 'the command to run goes after --', {
        exitCode: ExitCode.USAGE,
        hint: 'gpunet job exec <job> [--op ID] -- CMD [ARGS...]',
      })
    }
    const code = await runJobExec({
      job: args.job,
      op: flags.op,
      cmd: command,
      settings: this.settings,
      note: (line) => this.note(line),
    })
    this.setExitCode(code)
  }
}
