/** The network's markets as placement reads them (placement.ts), from the chain and the host manager. */
import type {MarketNetwork} from '../connect.js'
import {type MarketCatalog, networkCatalog} from './market-catalog.js'
import {listMarkets, marketReport} from './markets.js'
import {type PlacementMarket, placementMarket} from './placement.js'

/** The chain's markets with the host manager's figures (null where it said nothing), as placement reads them. */
export function placementMarkets(
  network: MarketNetwork['name'],
  chain: Awaited<ReturnType<typeof listMarkets>>,
  catalog: MarketCatalog,
): PlacementMarket[] {
  return chain.map(({address, market}) => placementMarket(marketReport(network, address, market, catalog)))
}

/**
 * The network's markets as placement reads them now (their free nodes, prices and the host manager's figures): what
 * a job's failover (job/failover) and a deployment's queue-timeout move (deployments/manager/move.ts) place with.
 */
export async function readPlacementMarkets(
  net: Pick<MarketNetwork, 'name' | 'connection' | 'programId' | 'hostManagerUrl'>,
): Promise<PlacementMarket[]> {
  const [chain, catalog] = await Promise.all([
    listMarkets(net.connection, net.programId),
    networkCatalog(net.hostManagerUrl),
  ])
  return placementMarkets(net.name, chain, catalog)
}
