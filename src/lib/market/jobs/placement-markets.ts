/** The network's markets as placement reads them (placement.ts), from the chain and the host manager. */
import type {MarketNetwork} from '../connect.js'
import {networkCatalog} from './market-catalog.js'
import {listMarkets, marketReport} from './markets.js'
import {type PlacementMarket, placementMarket} from './placement.js'

/**
 * The chain's markets with the host manager's figures (null where it said nothing): what the deployment manager
 * places a queue timeout's move with (deployments/manager/move.ts).
 */
export async function readPlacementMarkets(
  net: Pick<MarketNetwork, 'name' | 'connection' | 'programId' | 'hostManagerUrl'>,
): Promise<PlacementMarket[]> {
  const [chain, catalog] = await Promise.all([
    listMarkets(net.connection, net.programId),
    networkCatalog(net.hostManagerUrl),
  ])
  return chain.map(({address, market}) => placementMarket(marketReport(net.name, address, market, catalog)))
}
