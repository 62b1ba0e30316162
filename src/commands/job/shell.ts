import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {jobNodeFlags} from '../../cli/flags.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {execInJob} from '../../lib/job/exec.js'
import {parseAddressText} from '../../lib/text/base58-text.js'
import {connectJobNode} from '../../lib/job/node-connection.js'
import {openWalletKey} from '../../lib/keys/wallet-key.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class JobShell extends BaseCommand {
  static override summary = "Open an interactive shell inside a running job's operation."

  static override description = withExitCodes(
    `A terminal session in the operation's container (or beside its processes when the node runs jobs as host processes): bash where the image has it, else sh. Keys go through as typed (raw mode: Ctrl+C reaches the shell), the window size follows this terminal's, and Ctrl+D at an empty prompt ends it, as exit does; gpunet exits with the shell's exit code. stdin must be a terminal; to run one command from a script use \`job exec\`.

It speaks the network's /terminal route of the node API: the job's poster signs a grant ("Nosana Terminal Authorization v1", valid 4 minutes) for this job, node and network. The localnet's nodes serve it; so do the network's nodes that offer a terminal (a node that does not ends with exit 5).`,
    [
      ['N', 'the shell ended with N'],
      [2, 'usage: stdin is not a terminal, or a bad flag or address'],
      [5, 'the node API could not be reached, or offers no terminal'],
      [6, "the node API refused the grant: the wallet is not the job's poster"],
      [7, 'the job is not running, or no such operation runs in it'],
    ],
  )

  static override examples = [
    '<%= config.bin %> job shell 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a',
    '<%= config.bin %> job shell 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --op web',
  ]

  static override args = {job: Args.string({description: 'job address', required: true})}

  static override flags = {
    op: Flags.string({description: 'the operation to open it in (needed when several run)', helpValue: 'ID'}),
    ...jobNodeFlags,
  }

  static mcp = {exclude: 'interactive: a terminal session in the job, not one answer'}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(JobShell)
    const {stdin, stdout} = process
    if (!stdin.isTTY) {
      throw new GpunetError('not_a_terminal', 'job shell needs a terminal, and stdin is not one', {
        exitCode: ExitCode.USAGE,
        hint: `to run a command without a terminal: gpunet job exec ${args.job} -- CMD`,
      })
    }
    const job = parseAddressText(args.job, 'the job')
    const source = await connectJobNode(this.settings, (line) => this.note(line))
    const size = () => (stdout.columns > 0 && stdout.rows > 0 ? {cols: stdout.columns, rows: stdout.rows} : {})
    let onResize: (() => void) | undefined
    stdin.setRawMode(true)
    try {
      const code = await execInJob(source, job, {
        route: 'terminal',
        op: flags.op,
        cmd: [],
        tty: true,
        ...size(),
        wallet: () => openWalletKey(this.settings),
        input: stdin,
        output: (_stream, data) => stdout.write(data),
        opened: (session) => {
          onResize = () => {
            const now = size()
            if (now.cols) session.resize(now.cols, now.rows)
          }
          stdout.on('resize', onResize)
        },
      })
      this.setExitCode(code)
    } finally {
      if (onResize) stdout.off('resize', onResize)
      stdin.setRawMode(false)
    }
  }
}
