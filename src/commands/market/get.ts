import * as Args from '@oclif/core/args'

import {BaseCommand} from '../../cli/base-command.js'
import {marketFlags} from '../../cli/flags.js'
import {parseAddress} from '../../lib/market/connect.js'
import {readMarket} from '../../lib/market/jobs/jobs.js'
import {connectMarket} from '../../lib/network-connection.js'
import {marketDetail, type MarketDetail, marketDetailLines} from '../../lib/market/jobs/markets.js'
import {marketGpuModels, networkCatalog} from '../../lib/market/jobs/market-catalog.js'

export default class MarketGet extends BaseCommand {
  static override summary =
    'Show one market: GPU models, lowest VRAM, type, prices per second and hour (token and USD), free nodes, queue, required images.'
  static override description = `The chain's figures, what the network's host manager says of the market (the hostManagerUrl setting; on localnet its own) and the GPU models of its hosts with their VRAM and free hosts (the reservations routes, reservationsUrl): when it cannot be read the chain's figures are shown all the same, with a warning (exit 0), and its members are null under --json. An address that holds no market exits 7.`

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
    const [market, catalog, gpus] = await Promise.all([
      readMarket(net.connection, net.programId, address),
      networkCatalog(net.hostManagerUrl),
      marketGpuModels(net.reservationsUrl, address.toBase58()),
    ])
    for (const warning of [...catalog.warnings, ...gpus.warnings]) this.note(warning)
    const detail = {...marketDetail(network, address, market, catalog), gpuModels: gpus.models}
    for (const line of marketDetailLines(detail)) this.say(line)
    return detail
  }
}
