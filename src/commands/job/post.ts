import {Flags} from '@oclif/core'

import {BaseCommand} from '../../base-command.js'
import {marketFlags, waitFlags} from '../../flags.js'
import {loadPostableDefinition} from '../../lib/definition/upload.js'
import {computeCidV0} from '../../lib/ipfs/cid.js'
import {type AmountJson, amountJson} from '../../lib/market/amounts.js'
import {readBalances, SOL_DECIMALS} from '../../lib/market/balances.js'
import {confirmSpend} from '../../lib/market/confirm.js'
import {connectMarket, parseAddress, SETTINGS} from '../../lib/market/connect.js'
import {isFinal, readJob} from '../../lib/market/jobs.js'
import {TOKEN_DECIMALS} from '../../lib/market/networks.js'
import {listJob, quotePost} from '../../lib/market/post.js'
import {type FeeJson, feeJson, feeText} from '../../lib/market/send.js'
import {readResult, type ResultFields, resultText, rowsWithOutcome} from '../../lib/market/job-result.js'
import {amountText, jobReport, type JobReport, jobRows, reportLines} from '../../lib/market/report.js'
import {exposedPorts} from '../../lib/market/service-url.js'
import {needsGpu} from '../../lib/node/operation-plan.js'
import {waitForJob} from '../../lib/market/wait.js'
import {requireSetting} from '../../lib/network.js'
import {startProgress} from '../../lib/progress.js'
import {loadWallet} from '../../lib/wallet.js'

/** What `job post --json` prints: the job's report (with its result once `--wait` saw it end), the wallet's balances after posting, the signature. */
interface PostReport extends JobReport, ResultFields {
  wallet: {address: string; sol: AmountJson; tokens: AmountJson}
  signature: string
  /** The transaction fee in SOL, priority fee included (also on stderr before it is sent). */
  fee: FeeJson
  /** What the poster should know, also printed on stderr: e.g. no localnet node can run this job. */
  warnings: string[]
}

const NO_GPU_WARNING =
  'no localnet node has a GPU: this job will stay QUEUED until a node with one takes it ' +
  '(run `gpunet localnet start --gpus N` on a machine that has them)'

export default class JobPost extends BaseCommand {
  static override summary =
    'Post a job to a market: validate and upload its definition, pay its deposit, print its address.'
  static override description = `The job runs for --timeout seconds, or the market's job timeout (two hours on the default market); it costs the market's price per second times that duration, paid up front into the market's vault. Nothing is uploaded or sent when the definition is invalid (exit 3) or the wallet cannot pay (exit 4). On devnet and mainnet the total is shown and confirmed first, unless --yes.`

  static override examples = [
    '<%= config.bin %> job post --file job.json',
    '<%= config.bin %> job post --file job.json --timeout 600 --wait',
    '<%= config.bin %> job post --file job.json --network devnet --yes --json',
  ]

  static override flags = {
    file: Flags.string({
      char: 'f',
      description: 'job definition file (JSON or YAML)',
      required: true,
      helpValue: 'FILE',
    }),
    market: Flags.string({description: "market address [default: the network's default market]", helpValue: 'ADDRESS'}),
    timeout: Flags.integer({
      description: "seconds the job may run [default: the market's job timeout]",
      min: 1,
      helpValue: 'SECONDS',
    }),
    yes: Flags.boolean({char: 'y', description: 'spend without asking (devnet, mainnet)'}),
    ...waitFlags,
    ...marketFlags,
  }

  async run(): Promise<PostReport> {
    const {flags} = await this.parse(JobPost)
    const network = flags.network as 'localnet' | 'devnet' | 'mainnet'
    const note = (line: string) => this.note(line)
    const {definition, bytes, warnings} = await loadPostableDefinition(flags.file)
    for (const w of warnings) this.note(`Warning: ${flags.file}:${w.line}:${w.column} ${w.path}: ${w.message}`)
    const exposes = exposedPorts(definition).length > 0
    if (exposes && network !== 'localnet') requireSetting(network, SETTINGS.networkHost, flags['network-host'])

    const net = await connectMarket({
      network,
      rpc: flags.rpc,
      networkHost: flags['network-host'],
      priorityFee: flags['priority-fee'],
      maxPriorityFee: flags['max-priority-fee'],
      note,
    })
    // Said before anything is spent: the localnet's only node would leave the job queued for its whole life.
    const jobWarnings = net.localnetGpus === 0 && needsGpu(definition) ? [NO_GPU_WARNING] : []
    for (const w of jobWarnings) this.note(`Warning: ${w}`)
    const wallet = await loadWallet({path: flags.wallet, createIfMissing: network === 'localnet', note})
    const market = flags.market ? parseAddress(flags.market, 'the market') : net.defaultMarket
    const timeout = flags.timeout === undefined ? undefined : BigInt(flags.timeout)
    const quote = await quotePost(net, wallet, market, computeCidV0(bytes).cid, timeout)
    const total = amountJson(quote.total, TOKEN_DECIMALS, 'token')
    this.note(`Transaction fee: ${feeText(quote.fee)}`)
    await confirmSpend(network, `Post this job on ${network} for ${amountText(total)} (${quote.timeout} s)?`, flags.yes)

    const progress = startProgress(`Uploading the definition to ${net.content().url}`)
    let posted
    try {
      await net.content().add(bytes)
      progress.update(`Posting the job on ${network} (${amountText(total)})`)
      posted = await listJob(net, quote)
    } finally {
      progress.stop()
    }

    let view = await readJob(net.connection, net.programId, posted.job)
    if (flags.wait) {
      const waiting = startProgress(`Job ${posted.job.toBase58()} is ${view.status}`)
      try {
        const until = exposes ? (v: typeof view) => v.status !== 'QUEUED' : (v: typeof view) => isFinal(v.status)
        view = await waitForJob(net, posted.job, until, flags['wait-timeout'], (s) =>
          waiting.update(`Job ${posted.job.toBase58()} is ${s}`),
        )
      } finally {
        waiting.stop()
      }
    }
    if (exposes && network === 'localnet' && !net.gatewayUrl) {
      this.note('No service URL: the localnet runs no gateway for exposed ports yet.')
    }
    const balances = await readBalances(net.connection, wallet.publicKey, net.mint)
    const base = jobReport(
      network,
      view,
      definition,
      {networkHost: net.networkHost, gatewayUrl: net.gatewayUrl},
      Date.now() / 1000,
    )
    const report: PostReport = {
      ...base,
      ...(await readResult(net.content(), base)),
      wallet: {
        address: wallet.address,
        sol: amountJson(balances.lamports, SOL_DECIMALS, 'SOL'),
        tokens: amountJson(balances.tokens, TOKEN_DECIMALS, 'token'),
      },
      signature: posted.signature,
      fee: feeJson(posted.fee),
      warnings: jobWarnings,
    }
    this.say(`Posted job ${report.job} on ${network}`)
    const rows = report.result ? rowsWithOutcome(report) : jobRows(report)
    rows.splice(
      1,
      0,
      ['Wallet', report.wallet.address],
      ['Balance', `${amountText(report.wallet.sol)}, ${amountText(report.wallet.tokens)}`],
    )
    for (const line of reportLines(rows)) this.say(line)
    const result = resultText(report.resultContent)
    if (result !== null) {
      this.say()
      this.say(result)
    }
    return report
  }
}
