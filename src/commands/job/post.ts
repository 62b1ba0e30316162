import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {loadPostableDefinition} from '../../lib/definition/upload.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {PostCommand, postFlags} from '../../cli/post-command.js'
import type {CreditPostReport, DryRunReport, PostReport} from '../../lib/job/posting.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class JobPost extends PostCommand {
  static override summary =
    'Post a job to a market: validate and upload its definition, pay its deposit, print its address.'
  static override description = withExitCodes(
    `The job runs for --timeout (a duration such as 10m or 2h, or a number of seconds), or the market's job timeout (two hours on the default market); it costs the market's price per second times that duration, paid up front into the market's vault. Before anything is uploaded or paid: the definition is validated (exit 3), the secrets it refers to must be stored (exit 3; --no-secrets-check skips it), on localnet a node must be able to run it (exit 5; --queue-anyway posts it all the same) and the wallet must cover it (exit 4). --dry-run stops there and prints the quote. --gpu-model, --min-vram, --max-price and --market-type (and the definition's required_vram) place the job on the market that fits, has a free node and costs least, and print why (docs/jobs.md, "Placement"); with --market they check it (--strict: exit 3 when it does not fit). --queue-timeout waits until the job runs: still QUEUED after that long, it is delisted (its deposit back) and listed on the next market that fits, until one runs or none is left (exit 3); each move is a line on stderr and in --json's moves; the moves are journaled in gpunet's data folder, so a kill never lists the job twice (docs/jobs.md, "Failover"). Not with --credits (exit 2). On devnet and mainnet the total is shown and confirmed first, unless --yes.

With --credits, the job is paid by credits of the network's API (an API key: GPUNET_API_KEY) and listed by the API's wallet through its /api/jobs/list, with one Idempotency-Key for every try, so a retry never posts twice (docs/credits.md).

With --wait, follows the job: a job exposing ports until its services answer their health checks through the service URL, any other until it ends (--wait-for running|ready|done picks the point).`,
    [
      [0, 'posted (with --wait: it got there and did not fail)'],
      [
        2,
        'usage: a bad flag, a missing setting, mainnet without --yes, a bad --min-vram/--max-price, an unknown --gpu-model, a --queue-timeout out of range or with --credits',
      ],
      [
        3,
        'invalid definition, a secret it refers to is not stored, no market fits the need (or --market does not, with --strict), --queue-timeout found no market where a node took the job',
      ],
      [4, 'the wallet cannot pay (nothing uploaded or sent)'],
      [5, 'a service unreachable; on localnet, no node would run the job'],
      [8, '--wait saw the job end failed'],
      [9, '--wait saw the job stopped before it finished'],
      [124, '--wait ran out of time (--wait-timeout)'],
      [129, 'SIGHUP during --wait (the job goes on)'],
      [130, 'cancelled, or Ctrl+C during --wait (the job goes on)'],
      [143, 'SIGTERM during --wait, as CI cancels (the job goes on)'],
    ],
  )

  static override examples = [
    '<%= config.bin %> job post job.json',
    '<%= config.bin %> job post --file job.json --timeout 10m --wait',
    '<%= config.bin %> job post --file job.json --dry-run   # in CI: every check and the quote, nothing sent',
    '<%= config.bin %> job post --file llm.json --wait-for ready --wait-timeout 1800 --json',
    '<%= config.bin %> job post --file job.json --network devnet --yes --json',
    '<%= config.bin %> job post llm.json --min-vram 40 --max-price 5   # the market that fits, and why',
    '<%= config.bin %> job post llm.json --min-vram 40 --queue-timeout 10m --wait   # still queued after 10m: moved to the next market that fits',
  ]

  static override args = {
    file: Args.string({description: 'job definition file, as --file gives it', required: false}),
  }

  static override flags = {
    file: Flags.string({
      char: 'f',
      description: 'job definition file (JSON or YAML; - reads standard input)',
      helpValue: 'FILE',
    }),
    ...postFlags,
  }

  static paysOrDestroys = {what: 'wallet'} as const

  async run(): Promise<PostReport | DryRunReport | CreditPostReport> {
    const {args, flags} = await this.parse(JobPost)
    const file = definitionFile(args.file, flags.file)
    const loaded = await loadPostableDefinition(file, this.settings.network)
    for (const w of loaded.warnings) this.note(`Warning: ${file}:${w.line}:${w.column} ${w.path}: ${w.message}`)
    return this.postDefinition(flags, loaded)
  }
}

/** The definition file, given as `job post FILE` or `--file FILE` (once: two different files are exit 2). */
function definitionFile(arg: string | undefined, flag: string | undefined): string {
  if (arg !== undefined && flag !== undefined && arg !== flag) {
    throw new GpunetError('usage', `two definition files given: ${arg} and --file ${flag}`, {
      exitCode: ExitCode.USAGE,
      hint: 'post one file at a time: gpunet job post FILE',
    })
  }
  const file = arg ?? flag
  if (file === undefined) {
    throw new GpunetError('usage', 'no definition file given', {
      exitCode: ExitCode.USAGE,
      hint: 'gpunet job post FILE (or --file FILE; - reads standard input)',
    })
  }
  return file
}
