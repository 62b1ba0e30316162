import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {jobNodeFlags, waitFlags} from '../../cli/flags.js'
import {waitRequest} from '../../cli/wait.js'
import {endpointStatus} from '../../lib/market/jobs/endpoint-status.js'
import {followIfAsked, jobEndedBadly} from '../../lib/job/follow.js'
import {type MarketNetwork, parseAddress} from '../../lib/market/connect.js'
import {connectMarket} from '../../lib/network-connection.js'
import {fetchDefinition} from '../../lib/market/jobs/definition.js'
import {bytesToIpfsHash} from '../../lib/market/codec/ipfs-hash.js'
import {isFinal, type JobView, readJob} from '../../lib/market/jobs/jobs.js'
import {jobInfo, type JobInfo, rowsWithOutcome} from '../../lib/market/jobs/job-info.js'
import {resultText} from '../../lib/results/job-result.js'
import {closedJobReport, findClosedJob} from '../../lib/market/jobs/job-list.js'
import {reportLines} from '../../lib/market/jobs/report.js'
import {exposedPorts} from '../../lib/market/service-url.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {MAX_OUT_OPERATIONS, writeResultFiles} from '../../lib/results/result-files.js'
import {printable} from '../../lib/text/terminal-text.js'
import {openWallet} from '../../lib/keys/wallet.js'
import {movedTo, settleMoves} from '../../lib/job/failover/moving.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class JobGet extends BaseCommand {
  static override summary = 'Show a job: market, price, status, node, times, cost so far, service URLs and its result.'
  static override description = withExitCodes(
    `State is the chain's: QUEUED (waiting for a node), RUNNING (a node claimed it), COMPLETED (it ended: its node finished it and posted a result, or its poster stopped it while it ran, leaving no result) or STOPPED (its node gave it up, or its poster delisted it while queued: its account is closed, and the job is shown as the indexer keeps it). Outcome says how an ended job went: succeeded (a job its node stopped at its timeout too, as the network counts it: "it ran until its timeout"), failed (its result says so) or stopped (it did not finish); read from its result in the network's flow state, its pre-2025 format or gpunet's own; each operation's lines follow (docs/json.md, "States and outcomes"). --out DIR writes the result, each operation's streams and its results as files. With --wait, follows the job: a job exposing ports until its services answer their health checks, any other until it ends (--wait-for running|ready|done picks the point).`,
    [
      [0, 'shown (with --wait: it got there and did not fail)'],
      [2, 'usage: a bad flag or address, or --out over files already there (without --force)'],
      [5, 'the RPC node or content store failed'],
      [7, 'no job at that address; with --out, no result yet'],
      [8, '--wait saw the job end failed (the report is printed)'],
      [9, '--wait saw the job stopped before it finished (the report is printed)'],
      [124, '--wait ran out of time (--wait-timeout)'],
      [129, 'SIGHUP during --wait (the job goes on)'],
      [130, 'Ctrl+C during --wait (the job goes on)'],
      [143, 'SIGTERM during --wait, as CI cancels (the job goes on)'],
    ],
  )

  static override examples = [
    '<%= config.bin %> job get 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a',
    '<%= config.bin %> job get 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --wait --json',
    '<%= config.bin %> job get 5Zp1Qb3kq8o5oGb2Jk2DhPQH1p7q2h4nWc5ZkY7sQz1a --wait --out results/',
  ]

  static override args = {job: Args.string({description: 'job address', required: true})}

  static override flags = {
    ...waitFlags,
    out: Flags.string({
      description:
        "write the result into DIR: result.json as stored, each operation's <op>.stdout.log and <op>.stderr.log, its <op>.results.json, and manifest.json mapping operation ids to files",
      helpValue: 'DIR',
    }),
    force: Flags.boolean({description: 'with --out, overwrite files already there'}),
    ...jobNodeFlags,
  }

  static paysOrDestroys = {what: 'destroys', whenFlag: 'force'} as const

  async run(): Promise<JobInfo & {files?: string[]; movedTo?: string}> {
    const {args, flags} = await this.parse(JobGet)
    const {network} = this.settings
    const note = (line: string) => this.note(line)
    const address = parseAddress(args.job, 'the job')
    const net = await connectMarket(this.settings, note)
    const wait = waitRequest(flags)
    const wallet = () => openWallet(this.settings, {create: false})
    // A move a killed `job post --queue-timeout` left half done is settled first, so the job is shown as it ends up.
    const {dataDir} = this.settings
    await settleMoves({net, wallet, env: process.env, dataDir, note}, address.toBase58())
    const moved = movedTo(dataDir, network, address.toBase58())
    if (moved) note(`Job ${address.toBase58()} moved to job ${moved} (--queue-timeout): gpunet job get ${moved}`)
    const withMove = <T extends object>(report: T): T & {movedTo?: string} =>
      moved ? {...report, movedTo: moved} : report
    let view = await readJob(net.connection, net.programId, address).catch(async (error: unknown) => {
      const closed = await this.closedJob(net, address.toBase58(), error)
      if (!closed) throw error
      return closed
    })
    if ('closed' in view) {
      // A delisted job: its account is gone, the indexer keeps it (STOPPED, as `job list` shows it).
      note(`Job ${view.closed.job}'s account is closed: shown as the indexer keeps it`)
      // No result to write: --out is exit 7, as for any job without one.
      if (flags.out) this.writeOut(flags.out, view.closed, flags.force, undefined)
      for (const line of reportLines(rowsWithOutcome(view.closed))) this.say(line)
      return this.failWithReport(withMove(view.closed), wait ? jobEndedBadly(network, view.closed) : null)
    }
    const definition = await fetchDefinition(net, bytesToIpfsHash(view.job.ipfsJob), note)
    const followed = await followIfAsked(net, address, wait, {definition, wallet, seen: view})
    view = followed.view ?? (await readJob(net.connection, net.programId, address))
    // --out writes the result's bytes exactly as stored.
    let resultBytes: Uint8Array | undefined
    const report = await jobInfo(net, view, definition, flags.out ? (bytes) => (resultBytes = bytes) : undefined)
    await this.withOnline(net, view, report)
    if (definition && exposedPorts(definition).length > 0 && report.serviceUrls.length === 0 && !isFinal(view.status)) {
      note(
        network === 'localnet'
          ? 'No service URL: the localnet runs no gateway for exposed ports yet.'
          : `No service URL: set the network host (--network-host or GPUNET_NETWORK_HOST) for ${network}.`,
      )
    }
    const written = flags.out ? this.writeOut(flags.out, report, flags.force, resultBytes) : null
    for (const line of reportLines(rowsWithOutcome(report))) this.say(line)
    const result = resultText(report)
    if (result !== null) {
      this.say()
      this.say(printable(result, process.stdout))
    }
    const shown = withMove(written ? {...report, files: written} : report)
    return this.failWithReport(shown, followed.failure(report))
  }

  /** A job whose account is gone, from the indexer, when `error` says there is none and the wallet posted it. */
  private async closedJob(net: MarketNetwork, address: string, error: unknown): Promise<{closed: JobInfo} | null> {
    if (!(error instanceof GpunetError) || error.code !== 'job_not_found') return null
    const wallet = await openWallet(this.settings, {create: false}).catch(() => null)
    const found = wallet ? await findClosedJob(net, address, wallet.address) : null
    return found ? {closed: closedJobReport(net.name, found, Date.now() / 1000)} : null
  }

  /** Marks each service URL online or offline as the job's node says, when the wallet is the job's poster. */
  private async withOnline(net: MarketNetwork, view: JobView, report: JobInfo): Promise<void> {
    if (report.status !== 'RUNNING' || report.serviceUrls.length === 0) return
    const wallet = await openWallet(this.settings, {create: false}).catch(() => null)
    if (!wallet || wallet.address !== report.project) return
    const online = await endpointStatus(net, wallet, view)
    if (!online) return
    for (const service of report.serviceUrls) {
      const state = online.get(service.port)
      if (state !== undefined) service.online = state
    }
  }

  /** `--out`: the result's files; a job without a result yet is exit 7, as there is nothing to write. */
  private writeOut(dir: string, report: JobInfo, force: boolean, bytes: Uint8Array | undefined): string[] {
    if (report.resultContent === null) {
      throw new GpunetError('no_result', `job ${report.job} has no result yet: nothing to write into ${dir}`, {
        exitCode: ExitCode.NOT_FOUND,
        hint: `wait for it: \`gpunet job get ${report.job} --wait --out ${dir}\``,
      })
    }
    const {paths, omittedOperations} = writeResultFiles(dir, report.resultView, report.resultContent, {force, bytes})
    this.note(
      `Wrote ${paths.length} file${paths.length === 1 ? '' : 's'} into ${dir} (manifest.json maps operations to files)`,
    )
    if (omittedOperations > 0) {
      this.note(
        `${omittedOperations} operations past the first ${MAX_OUT_OPERATIONS} got no files of their own: their lines are in result.json`,
      )
    }
    return paths
  }
}
