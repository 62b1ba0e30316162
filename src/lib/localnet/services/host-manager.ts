/**
 * The routes of the network's host manager that its CLI asks before anything else (`HOST_MANAGER_URL`), answered
 * from the localnet's chain: `GET /rpc` (`{url}`: this RPC), `GET /markets/` and `GET /markets/<slug or address>`,
 * each market in the shape the network's API gives it (@nosana/api's `getApiMarkets`). The localnet's default market
 * has the slug `localnet`; every other market its own address as its slug. Read-only, no authentication: the
 * network's `/rpc` checks a node's signature, which tells a local client nothing.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'

import type {PublicKey} from '@solana/web3.js'

import {decodeMarketAccount, MARKET_ACCOUNT_DISCRIMINATOR, type MarketAccount} from '../../market/codec/accounts.js'
import {TOKEN_DECIMALS} from '../../market/networks.js'
import {sendJson, type SubService} from '../http.js'
import type {Localnet} from '../state.js'

/** The slug of the localnet's default market. */
export const DEFAULT_MARKET_SLUG = 'localnet'

/** A market as the network's host manager lists it. */
export interface HostManagerMarket {
  address: string
  slug: string
  name: string
  sft: string
  type: 'PREMIUM' | 'COMMUNITY' | 'OTHER'
  usd_reward_per_hour: null
  nos_reward_per_second: number
  nos_job_price_per_second: number
  network_fee_percentage: number
  premium_community_relation: null
  gpu_types: string[]
  required_images: string[]
  required_remote_resources: []
  client: boolean
}

/** The host manager's routes on the localnet's RPC port; `rpcUrl` is what `/rpc` answers. */
export function hostManagerService(localnet: Localnet, rpcUrl: () => string): SubService {
  return {
    name: 'host manager',
    matches: (path) => path === '/rpc' || path === '/markets' || path.startsWith('/markets/'),
    handle(req: IncomingMessage, res: ServerResponse, path: string) {
      req.resume()
      if (req.method !== 'GET') return sendJson(res, 405, {error: 'GET only'})
      if (path === '/rpc') return sendJson(res, 200, {url: rpcUrl()})
      const markets = listMarkets(localnet)
      const id = marketId(path)
      if (id === '') return sendJson(res, 200, markets)
      const market = markets.find((m) => m.slug === id || m.address === id)
      if (!market) return sendJson(res, 404, {error: 'Market not found', message: `no market ${id} on this localnet`})
      sendJson(res, 200, market)
    },
  }
}

/** The slug or address in `/markets/<id>`, '' for the list; a broken %-escape is no market's (never a throw). */
function marketId(path: string): string | null {
  try {
    return decodeURIComponent(path.replace(/^\/markets\/?/, '').replace(/\/$/, ''))
  } catch {
    return null
  }
}

/** Every market account of the localnet's jobs program, the default one first. */
function listMarkets(localnet: Localnet): HostManagerMarket[] {
  const defaultMarket = localnet.genesis.market
  const markets = localnet.chain
    .programAccounts(localnet.chain.programId)
    .filter(({account}) => Buffer.from(account.data.subarray(0, 8)).equals(MARKET_ACCOUNT_DISCRIMINATOR))
    .map(({pubkey, account}) => marketObject(pubkey, decodeMarketAccount(account.data), defaultMarket))
  return markets.sort((a, b) => Number(b.address === defaultMarket) - Number(a.address === defaultMarket))
}

function marketObject(address: PublicKey, market: MarketAccount, defaultMarket: string): HostManagerMarket {
  const isDefault = address.toBase58() === defaultMarket
  return {
    address: address.toBase58(),
    slug: isDefault ? DEFAULT_MARKET_SLUG : address.toBase58(),
    name: isDefault ? 'gpunet localnet' : `localnet market ${address.toBase58().slice(0, 8)}`,
    // The collection of the NFT a node needs; the system program when the market is open to every node.
    sft: market.nodeAccessKey.toBase58(),
    type: 'COMMUNITY',
    usd_reward_per_hour: null,
    nos_reward_per_second: 0,
    nos_job_price_per_second: Number(market.jobPrice) / 10 ** TOKEN_DECIMALS,
    network_fee_percentage: 0,
    premium_community_relation: null,
    gpu_types: [],
    required_images: [],
    required_remote_resources: [],
    client: true,
  }
}
