import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../base-command.js'
import {marketFlags} from '../../flags.js'
import {controlOperation} from '../../lib/job/operation-control.js'
import {stopJob} from '../../lib/market/manage.js'
import {type FeeJson, feeJson} from '../../lib/market/send.js'
import {openOwnJob} from '../../lib/network-connection.js'
import type {Network} from '../../lib/network.js'

interface StopReport {
  network: Network
  job: string
  /** `delist`: it was queued and the whole deposit came back; `end`: it was running, the node was paid its time. */
  action: 'delist' | 'end'
  /** What the job is now: `end` settles it as COMPLETED (as `job get` shows it); `delist` closes its account. */
  status: 'COMPLETED' | 'DELISTED'
  signature: string
  /** The transaction fee in SOL, priority fee included. */
  fee: FeeJson
}

/** `job stop --op`: one operation stopped by the job's node; the job goes on. */
interface OperationStopReport {
  network: Network
  job: string
  action: 'stop-operation'
  op: string
  stopped: string[]
}

export default class JobStop extends BaseCommand {
  static override summary =
    'Stop a job you posted: a queued one is delisted (the deposit comes back), a running one is ended.'
  static override description = `Ending a running job pays its node for the time it ran and returns the rest of the deposit. A delisted job's account is closed, so \`job get\` no longer finds it. With --op, only that operation of the running job is stopped, by its node (asked through its node API, signed by your wallet): the job goes on, nothing is sent to the chain.`

  static override examples = ['<%= config.bin %> job stop 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a']

  static override args = {job: Args.string({description: 'job address', required: true})}
  static override flags = {
    ...marketFlags,
    op: Flags.string({
      description: 'stop only this operation of the running job (its id), through its node; the job goes on',
      helpValue: 'ID',
    }),
  }

  async run(): Promise<StopReport | OperationStopReport> {
    const {args, flags} = await this.parse(JobStop)
    const {network} = this.settings
    const {net, wallet, view} = await openOwnJob(this.settings, args.job, (line) => this.note(line))
    if (flags.op !== undefined) {
      const {ops} = await controlOperation(net, wallet, view, {op: flags.op}, 'stop')
      this.say(`Stopped operation ${ops.join(', ')} of job ${args.job}; the job goes on`)
      return {network, job: args.job, action: 'stop-operation', op: flags.op, stopped: ops}
    }
    const {action, signature, fee} = await stopJob(net, wallet, view)
    this.say(
      action === 'delist'
        ? `Stopped job ${args.job}: it was queued, the deposit came back to ${view.job.payer.toBase58()}`
        : `Stopped job ${args.job}: its node was paid for the time it ran, the rest came back`,
    )
    const status = action === 'end' ? 'COMPLETED' : 'DELISTED'
    return {network, job: args.job, action, status, signature, fee: feeJson(fee)}
  }
}
