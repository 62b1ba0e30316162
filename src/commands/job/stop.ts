import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {apiKeyFlag, managerFlag, marketFlags} from '../../cli/flags.js'
import {newIdempotencyKey, stopWithCredits} from '../../lib/credits/client.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {connectManager} from '../../lib/manager-connection.js'
import {controlOperation, endedJobHasNoOperation} from '../../lib/job/operation-control.js'
import {stopJob} from '../../lib/market/jobs/manage.js'
import {type FeeJson, feeJson} from '../../lib/market/rpc/send.js'
import {connectMarket, openOwnJob} from '../../lib/network-connection.js'
import {openWallet} from '../../lib/keys/wallet.js'
import {hasJournal, settleMoves} from '../../lib/job/failover/moving.js'
import type {Network} from '../../lib/network.js'

interface StopReport {
  network: Network
  job: string
  /** `delist`: it was queued and the whole deposit came back; `end`: it was running, the node was paid its time. */
  action: 'delist' | 'end'
  /**
   * The chain state it is now (docs/json.md, "States and outcomes"): `end` settles it as COMPLETED; `delist`
   * closes its account, and indexers list it STOPPED.
   */
  state: 'COMPLETED' | 'STOPPED'
  /** Always `stopped`: it did not finish. */
  outcome: 'stopped'
  /** Deprecated (0.2): `state` and `outcome`; COMPLETED or DELISTED, kept for one minor version. */
  status: 'COMPLETED' | 'DELISTED'
  signature: string
  /** The transaction fee in SOL, priority fee included. */
  fee: FeeJson
}

/** `job stop --credits`: stopped by the network's API, whose wallet posted it; the API pays the fee. */
interface CreditStopReport {
  network: Network
  job: string
  action: 'delist' | 'end'
  state: 'COMPLETED' | 'STOPPED'
  outcome: 'stopped'
  signature: string
  manager: string
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
  static override description = `Ending a running job pays its node for the time it ran and returns the rest of the deposit. A delisted job's account is closed: \`job list\` and \`job get\` show it STOPPED (from the indexer), outcome stopped. With --op, only that operation of the running job is stopped, by its node (asked through its node API, signed by your wallet): the job goes on, nothing is sent to the chain.`

  static override examples = ['<%= config.bin %> job stop 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a']

  static override args = {job: Args.string({description: 'job address', required: true})}
  static override flags = {
    ...marketFlags,
    op: Flags.string({
      description: 'stop only this operation of the running job (its id), through its node; the job goes on',
      helpValue: 'ID',
    }),
    credits: Flags.boolean({
      description:
        "a job paid by credits (job post --credits): stopped by the network's API that listed it, with your API key; what it did not run is credited back",
      exclusive: ['op'],
    }),
    manager: managerFlag,
    'api-key': apiKeyFlag,
  }

  static paysOrDestroys = {what: 'destroys'} as const

  async run(): Promise<StopReport | OperationStopReport | CreditStopReport> {
    const {args, flags} = await this.parse(JobStop)
    const {network} = this.settings
    if (flags.credits) return this.stopWithCredits(args.job)
    // A move a killed `job post --queue-timeout` left half done is settled first: the job stopped is the one listed.
    await this.settleMovesOf(args.job)
    const {net, wallet, view} = await openOwnJob(this.settings, args.job, (line) => this.note(line)).catch(
      (error: unknown) => {
        // --op asks the node for an operation, as `job restart` does: an ended job has none running (7).
        throw flags.op === undefined ? error : endedJobHasNoOperation(error)
      },
    )
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
    const state = action === 'end' ? 'COMPLETED' : 'STOPPED'
    const status = action === 'end' ? 'COMPLETED' : 'DELISTED'
    return {network, job: args.job, action, state, outcome: 'stopped', status, signature, fee: feeJson(fee)}
  }

  private async settleMovesOf(job: string): Promise<void> {
    if (!hasJournal(this.settings.dataDir)) return
    const note = (line: string) => this.note(line)
    const net = await connectMarket(this.settings, note)
    const wallet = () => openWallet(this.settings, {create: false})
    await settleMoves({net, wallet, env: process.env, dataDir: this.settings.dataDir, note}, job)
  }

  private async stopWithCredits(job: string): Promise<CreditStopReport> {
    checkAddress(job)
    const api = await connectManager(this.settings, {note: (line) => this.note(line)})
    const answer = await stopWithCredits(api.client, job, newIdempotencyKey())
    const action = answer.delisted ? 'delist' : 'end'
    this.say(
      answer.delisted
        ? `Stopped job ${job}: it was queued, its credits came back`
        : `Stopped job ${job}: its node was paid for the time it ran, the rest of its credits came back`,
    )
    const state = action === 'end' ? 'COMPLETED' : 'STOPPED'
    return {
      network: this.settings.network,
      job,
      action,
      state,
      outcome: 'stopped',
      signature: answer.tx,
      manager: api.url,
    }
  }
}

/** A job address as given, checked before it is sent anywhere (exit 2). */
function checkAddress(job: string): void {
  if (/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(job)) return
  throw new GpunetError('invalid_address', `"${job.slice(0, 60)}" is not a job address`, {
    exitCode: ExitCode.USAGE,
    hint: 'a job address is base58, as job post printed it',
  })
}
