import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {jobNodeFlags} from '../../cli/flags.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {controlOperation, endedJobHasNoOperation} from '../../lib/job/operation-control.js'
import {openOwnJob} from '../../lib/network-connection.js'
import type {Network} from '../../lib/network.js'

interface RestartReport {
  network: Network
  job: string
  /** The operation or group asked for. */
  op: string | null
  group: string | null
  /** The operations the node restarted. */
  restarted: string[]
}

export default class JobRestart extends BaseCommand {
  static override summary =
    'Restart one operation (--op) or every running operation of a group (--group) of your running job.'
  static override description = `Asks the job's node through its node API, signed by your wallet (the job's poster): the operation's command is stopped and started again, as one more run of the same operation (its logs and result keep every run). Only operations that run now can be restarted: those of the group the job runs.

--json prints {network, job, op, group, restarted}.

EXIT CODES
  0    restarted
  2    usage: a bad flag or address, no --op or --group; or the operation is not running now (another group runs)
  5    the node API could not be reached, or failed
  6    the node refused: the wallet is not the job's poster
  7    no such operation or group in the job; or the job is not running (QUEUED, or already COMPLETED or STOPPED), as job exec and job stats say`

  static override examples = [
    '<%= config.bin %> job restart 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --op server',
    '<%= config.bin %> job restart 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --group main',
  ]

  static override args = {job: Args.string({description: 'job address', required: true})}
  static override flags = {
    op: Flags.string({description: 'the operation to restart (its id)', helpValue: 'ID', exclusive: ['group']}),
    group: Flags.string({description: 'restart every running operation of this group', helpValue: 'GROUP'}),
    ...jobNodeFlags,
  }

  async run(): Promise<RestartReport> {
    const {args, flags} = await this.parse(JobRestart)
    const {network} = this.settings
    if (flags.op === undefined && flags.group === undefined) {
      throw new GpunetError('missing_target', 'name what to restart: --op ID or --group GROUP', {
        exitCode: ExitCode.USAGE,
      })
    }
    const {net, wallet, view} = await openOwnJob(this.settings, args.job, (line) => this.note(line)).catch(
      (error: unknown) => {
        throw endedJobHasNoOperation(error)
      },
    )
    const target = flags.op !== undefined ? {op: flags.op} : {group: flags.group!}
    const {ops} = await controlOperation(net, wallet, view, target, 'restart')
    this.say(`Restarted ${ops.length === 1 ? 'operation' : 'operations'} ${ops.join(', ')} of job ${args.job}`)
    return {network, job: args.job, op: flags.op ?? null, group: flags.group ?? null, restarted: ops}
  }
}
