import {BaseCommand} from '../../cli/base-command.js'
import {marketFlags} from '../../cli/flags.js'
import {connectMarket} from '../../lib/network-connection.js'
import {listMarkets, marketReport, type MarketReport, marketRows} from '../../lib/market/jobs/markets.js'
import type {Network} from '../../lib/network.js'

export default class MarketList extends BaseCommand {
  static override summary =
    "List the network's markets: price per second, job timeout, queue, node stake minimum, access key."
  static override description = `Reads every market of the jobs program from the chain (getProgramAccounts, which some RPC providers limit: use --rpc with one that serves it). The network's default market is marked with *.`

  static override examples = [
    '<%= config.bin %> market list --network devnet',
    '<%= config.bin %> market list --network mainnet --json | jq -r \'.markets[] | select(.queue.kind == "nodes") | .market\'',
  ]

  static override flags = {network: marketFlags.network, profile: marketFlags.profile, rpc: marketFlags.rpc}

  async run(): Promise<{network: Network; defaultMarket: string; markets: MarketReport[]}> {
    await this.parse(MarketList)
    const {network} = this.settings
    const net = await connectMarket(this.settings, (line) => this.note(line))
    const markets = (await listMarkets(net.connection, net.programId)).map(({address, market}) =>
      marketReport(network, address, market),
    )
    const defaultMarket = net.defaultMarket.toBase58()
    this.say(`${markets.length} market${markets.length === 1 ? '' : 's'} on ${network}`)
    for (const line of marketRows(markets, defaultMarket)) this.say(line)
    return {network, defaultMarket, markets}
  }
}
