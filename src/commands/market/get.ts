import * as Args from '@oclif/core/args'

import {BaseCommand} from '../../cli/base-command.js'
import {marketFlags} from '../../cli/flags.js'
import {parseAddress} from '../../lib/market/connect.js'
import {readMarket} from '../../lib/market/jobs/jobs.js'
import {connectMarket} from '../../lib/network-connection.js'
import {marketDetail, type MarketDetail, marketDetailLines} from '../../lib/market/jobs/markets.js'

export default class MarketGet extends BaseCommand {
  static override summary = 'Show one market: price per second, job timeout, queue and who is in it, node requirements.'
  static override description = `An address that holds no market exits 7.`

  static override examples = [
    '<%= config.bin %> market get 7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41 --network devnet',
    '<%= config.bin %> market get 7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41 --network mainnet --json',
  ]

  static override args = {market: Args.string({description: 'market address', required: true})}
  static override flags = {network: marketFlags.network, profile: marketFlags.profile, rpc: marketFlags.rpc}

  async run(): Promise<MarketDetail> {
    const {args} = await this.parse(MarketGet)
    const {network} = this.settings
    const address = parseAddress(args.market, 'the market')
    const net = await connectMarket(this.settings, (line) => this.note(line))
    const detail = marketDetail(network, address, await readMarket(net.connection, net.programId, address))
    for (const line of marketDetailLines(detail)) this.say(line)
    return detail
  }
}
