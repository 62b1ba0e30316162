import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {marketFlags} from '../../cli/flags.js'
import {parseAddress} from '../../lib/market/connect.js'
import {
  type IndexedJobState,
  JOB_LIST_STATES,
  JOB_OUTCOMES,
  jobListRows,
  type ListedJob,
  listJobs,
  MAX_LIST_LIMIT,
  OUTCOME_SCAN_LIMIT,
} from '../../lib/market/jobs/job-list.js'
import type {Outcome} from '../../lib/results/outcome.js'
import {connectMarket} from '../../lib/network-connection.js'
import type {Network} from '../../lib/network.js'
import {printable} from '../../lib/text/terminal-text.js'
import {openWallet} from '../../lib/keys/wallet.js'
import {withExitCodes} from '../../cli/exit-codes.js'

interface ListReport {
  network: Network
  source: 'indexer' | 'chain'
  poster: string
  /** null when --outcome stopped reading before the last job. */
  total: number | null
  limit: number
  offset: number
  jobs: ListedJob[]
}

export default class JobList extends BaseCommand {
  static override summary =
    "List your wallet's jobs, newest first: address, state, outcome, market, start, duration, cost."

  static override description = withExitCodes(
    `Jobs come from the network's indexer (the localnet runs its own), which keeps jobs whose accounts were closed (delisted ones, shown STOPPED, and cleaned ones). STATE is the chain's; OUTCOME says how an ended job went: succeeded, failed (read from its result) or stopped (it did not finish: its poster ended or delisted it, or its node gave it up; a running job its poster stopped is COMPLETED on chain, outcome stopped). --state takes either case (docs/json.md, "States and outcomes"); --outcome lists the jobs that ended one way, whatever their chain state (--outcome stopped: every stopped job), reading the newest ${OUTCOME_SCAN_LIMIT} jobs at most. --source chain reads the chain instead (getProgramAccounts): only jobs whose accounts still exist, ordered by start time. The indexer allows about 20 requests in 30 s; a 429 is waited out (Retry-After) before gpunet gives up with exit 5.`,
    [
      [0, 'listed (an empty list included)'],
      [2, 'usage: a bad flag or address'],
      [5, "the indexer or RPC node failed, or the indexer's rate limit held"],
    ],
  )

  static override examples = [
    '<%= config.bin %> job list',
    '<%= config.bin %> job list --state RUNNING --json',
    '<%= config.bin %> job list --outcome stopped',
    '<%= config.bin %> job list --network devnet --limit 50 --offset 50',
    '<%= config.bin %> job list --network mainnet --source chain',
  ]

  static override flags = {
    state: Flags.string({description: 'only jobs in this chain state (either case)', options: [...JOB_LIST_STATES]}),
    outcome: Flags.string({description: 'only jobs that ended this way', options: [...JOB_OUTCOMES]}),
    market: Flags.string({description: 'only jobs of this market', helpValue: 'ADDRESS'}),
    node: Flags.string({description: 'only jobs this node ran or runs', helpValue: 'ADDRESS'}),
    limit: Flags.integer({description: 'jobs per page', default: 20, min: 1, max: MAX_LIST_LIMIT}),
    offset: Flags.integer({description: 'jobs to skip (the newest first)', default: 0, min: 0}),
    source: Flags.string({
      description: 'where the list comes from',
      options: ['indexer', 'chain'],
      default: 'indexer',
    }),
    network: marketFlags.network,
    profile: marketFlags.profile,
    rpc: marketFlags.rpc,
    wallet: marketFlags.wallet,
  }

  async run(): Promise<ListReport> {
    const {flags} = await this.parse(JobList)
    const {network} = this.settings
    const market = flags.market === undefined ? undefined : parseAddress(flags.market, 'the market').toBase58()
    const node = flags.node === undefined ? undefined : parseAddress(flags.node, 'the node').toBase58()
    const wallet = await openWallet(this.settings, {create: false})
    const net = await connectMarket(this.settings, (line) => this.note(line))
    const query = {
      poster: wallet.address,
      state: flags.state as IndexedJobState | undefined,
      market,
      node,
      outcome: flags.outcome as Outcome | undefined,
      limit: flags.limit,
      offset: flags.offset,
    }
    const page = await listJobs(net, query, flags.source as 'indexer' | 'chain')
    const shown = page.jobs.length
    const range = shown === 0 ? 'none' : `${flags.offset + 1}-${flags.offset + shown}`
    const of = page.total === null ? 'more' : String(page.total)
    this.note(`Jobs of ${wallet.address} on ${network} (${page.source}): ${range} of ${of}`)
    // The indexer is a remote party: its strings reach a terminal without control sequences.
    for (const line of jobListRows(page.jobs, (cell) => printable(cell, process.stdout))) this.say(line)
    if (page.more) this.note(`More: --offset ${flags.offset + shown}`)
    else if (page.total === null)
      this.note(`Only the newest ${OUTCOME_SCAN_LIMIT} jobs were read: narrow with --market or --node`)
    if (query.state === 'STOPPED' && !query.outcome) {
      this.note('A running job its poster stopped is COMPLETED on chain: --outcome stopped lists every stopped job')
    }
    return {
      network,
      source: page.source,
      poster: wallet.address,
      total: page.total,
      limit: flags.limit,
      offset: flags.offset,
      jobs: page.jobs,
    }
  }
}
