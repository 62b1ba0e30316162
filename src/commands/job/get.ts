import {Args} from '@oclif/core'

import {BaseCommand} from '../../base-command.js'
import {marketFlags, waitFlags} from '../../flags.js'
import {parseAddress} from '../../lib/market/connect.js'
import {connectMarket} from '../../lib/network-connection.js'
import {fetchDefinition} from '../../lib/market/definition.js'
import {bytesToIpfsHash} from '../../lib/market/ipfs-hash.js'
import {isFinal, readJob} from '../../lib/market/jobs.js'
import {readResult, type ResultFields, resultText, rowsWithOutcome} from '../../lib/market/job-result.js'
import {jobReport, type JobReport, reportLines} from '../../lib/market/report.js'
import {exposedPorts} from '../../lib/market/service-url.js'
import {waitForJob} from '../../lib/market/wait.js'
import type {Network} from '../../lib/network.js'
import {startProgress} from '../../lib/progress.js'

/** `job get --json`: the job's report, how it went and, once done, the result's content. */
type GetReport = JobReport & ResultFields

export default class JobGet extends BaseCommand {
  static override summary = 'Show a job: market, price, status, node, times, cost so far, service URLs and its result.'
  static override description = `Status is QUEUED (waiting for a node), RUNNING (a node claimed it), COMPLETED (the node finished it and posted a result) or STOPPED (its poster ended it). With --wait, follows the job until it is COMPLETED or STOPPED. An unknown address exits 7.`

  static override examples = [
    '<%= config.bin %> job get 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a',
    '<%= config.bin %> job get 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --wait --json',
  ]

  static override args = {job: Args.string({description: 'job address', required: true})}

  static override flags = {
    ...waitFlags,
    network: marketFlags.network,
    rpc: marketFlags.rpc,
    'network-host': marketFlags['network-host'],
  }

  async run(): Promise<GetReport> {
    const {args, flags} = await this.parse(JobGet)
    const network = flags.network as Network
    const note = (line: string) => this.note(line)
    const address = parseAddress(args.job, 'the job')
    const net = await connectMarket({network, rpc: flags.rpc, networkHost: flags['network-host'], note})
    let view = await readJob(net.connection, net.programId, address)
    if (flags.wait && !isFinal(view.status)) {
      const progress = startProgress(`Job ${args.job} is ${view.status}`)
      try {
        view = await waitForJob(
          net,
          address,
          (v) => isFinal(v.status),
          flags['wait-timeout'],
          (s) => progress.update(`Job ${args.job} is ${s}`),
        )
      } finally {
        progress.stop()
      }
    }
    const definition = await fetchDefinition(net, bytesToIpfsHash(view.job.ipfsJob), note)
    const hosts = {networkHost: net.networkHost, gatewayUrl: net.gatewayUrl}
    const base = jobReport(network, view, definition, hosts, Date.now() / 1000)
    if (definition && exposedPorts(definition).length > 0 && base.serviceUrls.length === 0 && !isFinal(view.status)) {
      note(
        network === 'localnet'
          ? 'No service URL: the localnet runs no gateway for exposed ports yet.'
          : `No service URL: set the network host (--network-host or GPUNET_NETWORK_HOST) for ${network}.`,
      )
    }
    const report: GetReport = {...base, ...(await readResult(net.content(), base))}
    for (const line of reportLines(rowsWithOutcome(report))) this.say(line)
    const result = resultText(report.resultContent)
    if (result !== null) {
      this.say()
      this.say(result)
    }
    return report
  }
}
