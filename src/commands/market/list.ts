import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {marketFlags} from '../../cli/flags.js'
import {connectMarket} from '../../lib/network-connection.js'
import {networkCatalog} from '../../lib/market/jobs/market-catalog.js'
import {filterMarkets, listMarkets, marketReport, type MarketReport, marketRows} from '../../lib/market/jobs/markets.js'
import type {Network} from '../../lib/network.js'

export default class MarketList extends BaseCommand {
  static override summary =
    "List the network's markets: GPU models, lowest VRAM, type, price per hour in the token and in USD, free nodes, queued jobs."
  static override description = `Reads every market of the jobs program from the chain (getProgramAccounts, which some RPC providers limit: use --rpc with one that serves it): its price, job timeout, free nodes (waiting in its queue) and queued jobs. What the chain does not hold (GPU models, lowest VRAM, type, USD price and network fee, required images) comes from the network's host manager (the hostManagerUrl setting; on localnet its own): when it cannot be read the chain's figures are printed all the same, with a warning (exit 0), and those members are null under --json. The network's default market is marked with *. --gpu-model, --min-vram and --type keep the markets that match (they need the host manager: exit 5 without it).`

  static override examples = [
    '<%= config.bin %> market list --network devnet',
    '<%= config.bin %> market list --min-vram 40',
    "<%= config.bin %> market list --gpu-model 'NVIDIA GeForce RTX 4090' --type PREMIUM --network mainnet",
    "<%= config.bin %> market list --network mainnet --json | jq -r '.markets[] | select(.freeNodes > 0) | .market'",
  ]

  static override flags = {
    network: marketFlags.network,
    profile: marketFlags.profile,
    rpc: marketFlags.rpc,
    'gpu-model': Flags.string({
      description: "only markets with this GPU model among their GPU types (the network's name, any case)",
      helpValue: 'MODEL',
    }),
    'min-vram': Flags.integer({
      description: 'only markets whose lowest VRAM is at least this many GB',
      min: 0,
      helpValue: 'GB',
    }),
    type: Flags.string({description: 'only markets of this type', options: ['PREMIUM', 'COMMUNITY', 'OTHER']}),
  }

  async run(): Promise<{network: Network; defaultMarket: string; tokenUsd: number | null; markets: MarketReport[]}> {
    const {flags} = await this.parse(MarketList)
    const {network} = this.settings
    const net = await connectMarket(this.settings, (line) => this.note(line))
    const [chain, catalog] = await Promise.all([
      listMarkets(net.connection, net.programId),
      networkCatalog(net.hostManagerUrl),
    ])
    for (const warning of catalog.warnings) this.note(warning)
    const reports = chain.map(({address, market}) => marketReport(network, address, market, catalog))
    const filters = {gpuModel: flags['gpu-model'], minVram: flags['min-vram'], type: flags.type}
    const markets = filterMarkets(reports, filters, catalog)
    const defaultMarket = net.defaultMarket.toBase58()
    this.say(`${markets.length} market${markets.length === 1 ? '' : 's'} on ${network}`)
    for (const line of marketRows(markets, defaultMarket)) this.say(line)
    return {network, defaultMarket, tokenUsd: catalog.tokenUsd, markets}
  }
}
