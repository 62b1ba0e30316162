/**
 * The routes of the network's host manager, answered from the localnet's chain and its markets: `GET /rpc` (`{url}`:
 * this RPC, which the network's CLI asks first), the markets in the shape the network's API gives them (`/markets/`,
 * `/markets/<slug or address>`, `/markets/<id>/required-resources`, `/markets/prices`, and `/markets/price`, the
 * token's USD price), each also under `/api/` as @nosana/api 2.1.8 calls them, and the reservations lookups
 * (reservations.ts). Read-only, no authentication: the network's `/rpc` checks a node's signature, which tells a
 * local client nothing. A market someone opened on the chain by hand is listed with what the chain says of it.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'

import type {PublicKey} from '@solana/web3.js'

import {
  decodeMarketAccount,
  MARKET_ACCOUNT_DISCRIMINATOR,
  type MarketAccount,
  QueueType,
} from '../../market/codec/accounts.js'
import {TOKEN_DECIMALS} from '../../market/networks.js'
import {readBody, sendJson, sendTooLarge, type SubService} from '../http.js'
import type {Localnet} from '../state.js'
import type {OpenedMarket} from '../markets/record.js'
import {DEFAULT_MARKET_SLUG, type MarketType} from '../markets/spec.js'
import type {LocalnetNodeEntry} from '../nodes/node-agent.js'
import {availableHosts, gpuModels, type HostView, requirementOptions, ReservationsError} from './reservations.js'

export {DEFAULT_MARKET_SLUG}

/** The most bytes of a reservations request body: a requirement set is a few hundred. */
const MAX_BODY = 64 * 1024

/** A market as the network's host manager lists it (@nosana/api 2.1.8's `getApiMarkets`). */
export interface HostManagerMarket {
  address: string
  slug: string
  name: string
  sft: string
  type: MarketType
  usd_reward_per_hour: number
  nos_reward_per_second: number
  nos_job_price_per_second: number
  network_fee_percentage: number
  premium_community_relation: null
  gpu_types: string[]
  required_images: string[]
  required_remote_resources: []
  /** Its nodes' addresses. */
  nodes: string[]
  client: boolean
  /** GB: the least VRAM of a node of it; absent for a market the localnet did not open. */
  lowest_vram?: number
}

/** What the routes read of the localnet besides its chain: its markets, its nodes now, the token's USD price. */
export interface MarketsView {
  markets(): readonly OpenedMarket[]
  nodes(): readonly LocalnetNodeEntry[]
  tokenUsd: number
}

/** The host manager's routes on the localnet's RPC port; `rpcUrl` is what `/rpc` answers. */
export function hostManagerService(localnet: Localnet, rpcUrl: () => string, view: MarketsView): SubService {
  return {
    name: 'host manager',
    matches: (path) => {
      const bare = path.replace(/^\/api(?=\/)/, '')
      return bare === '/rpc' || bare === '/markets' || bare.startsWith('/markets/') || bare.startsWith('/reservations/')
    },
    async handle(req: IncomingMessage, res: ServerResponse, path: string) {
      const bare = path.replace(/^\/api(?=\/)/, '')
      if (bare.startsWith('/reservations/')) return reservations(req, res, bare, localnet, view)
      req.resume()
      if (req.method !== 'GET') return sendJson(res, 405, {error: 'GET only'})
      if (bare === '/rpc') return sendJson(res, 200, {url: rpcUrl()})
      if (bare === '/markets/price') return sendJson(res, 200, {price: view.tokenUsd})
      const markets = listMarkets(localnet, view)
      if (bare === '/markets/prices') return sendJson(res, 200, markets.map(priceOf))
      const [id, rest] = marketPath(bare)
      if (id === '' && rest === '') return sendJson(res, 200, markets)
      const market = markets.find((m) => m.slug === id || m.address === id)
      if (!market || (rest !== '' && rest !== 'required-resources')) {
        return sendJson(res, 404, {name: 'NotFound', message: `no market ${id} on this localnet`})
      }
      if (rest === '') return sendJson(res, 200, market)
      const nodes = view.nodes().filter((n) => n.market === market.address)
      sendJson(res, 200, {
        required_images: market.required_images,
        required_remote_resources: market.required_remote_resources,
        required_vram: market.lowest_vram ?? null,
        required_memory: nodes.length > 0 ? Math.min(...nodes.map((n) => n.ram)) : null,
      })
    },
  }
}

/** The reservations lookups: GET /reservations/gpus, GET and POST /reservations/requirements, POST /reservations/available. */
async function reservations(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  localnet: Localnet,
  view: MarketsView,
): Promise<void> {
  const route = path.replace(/\/$/, '')
  const known = {'/reservations/gpus': 'GET', '/reservations/available': 'POST'} as Record<string, string>
  if (route !== '/reservations/requirements' && !known[route]) {
    req.resume()
    return sendJson(res, 404, {message: `no route ${route}`})
  }
  const method = req.method ?? 'GET'
  if (route !== '/reservations/requirements' && method !== known[route]) {
    req.resume()
    return sendJson(res, 405, {message: `${known[route]} only`})
  }
  let body: unknown
  if (method === 'POST') {
    const raw = await readBody(req, MAX_BODY)
    if (raw === null) return sendTooLarge(req, res, {message: `the body is over ${MAX_BODY} bytes`})
    try {
      body = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'))
    } catch {
      return sendJson(res, 422, {message: 'the body is not JSON'})
    }
  } else {
    req.resume()
    const metrics = new URL(req.url ?? '/', 'http://localhost').searchParams.get('metrics')
    body = metrics === null ? {} : {metrics: metrics.split(',').filter((m) => m !== '')}
  }
  const hosts = hostViews(localnet, view)
  try {
    if (route === '/reservations/gpus') return sendJson(res, 200, gpuModels(hosts))
    if (route === '/reservations/available') return sendJson(res, 200, availableHosts(hosts, body))
    if (method !== 'GET' && method !== 'POST') return sendJson(res, 405, {message: 'GET or POST only'})
    sendJson(res, 200, requirementOptions(hosts, body))
  } catch (error) {
    if (!(error instanceof ReservationsError)) throw error
    sendJson(res, error.status, {message: error.message})
  }
}

/** The localnet's nodes as the lookups see them: free when waiting in their market's node queue on chain. */
function hostViews(localnet: Localnet, view: MarketsView): HostView[] {
  const markets = listMarkets(localnet, view)
  const queues = new Map<string, Set<string>>()
  for (const {pubkey, account} of marketAccounts(localnet)) {
    const market = decodeMarketAccount(account.data)
    const queued = market.queueType === QueueType.NODE ? market.queue.map((k) => k.toBase58()) : []
    queues.set(pubkey.toBase58(), new Set(queued))
  }
  return view.nodes().map((node) => ({
    address: node.address,
    market: node.market,
    gpu: node.gpu,
    vram: node.vram,
    ram: node.ram,
    country: node.country,
    queued: !node.left && (queues.get(node.market)?.has(node.address) ?? false),
    working: node.state === 'running',
    usdPerHour: markets.find((m) => m.address === node.market)?.usd_reward_per_hour ?? 0,
  }))
}

/** `/markets/<id>/<rest>` as its id and rest ('' when absent); a broken %-escape is no market's (never a throw). */
function marketPath(path: string): [string | null, string] {
  const parts = path
    .replace(/^\/markets\/?/, '')
    .replace(/\/$/, '')
    .split('/')
  try {
    return [decodeURIComponent(parts[0] ?? ''), parts.slice(1).join('/')]
  } catch {
    return [null, '']
  }
}

function marketAccounts(localnet: Localnet) {
  return localnet.chain
    .programAccounts(localnet.chain.programId)
    .filter(({account}) => Buffer.from(account.data.subarray(0, 8)).equals(MARKET_ACCOUNT_DISCRIMINATOR))
}

/** Every market account of the localnet's jobs program: the default one first, then the localnet's, then others. */
function listMarkets(localnet: Localnet, view: MarketsView): HostManagerMarket[] {
  const opened = view.markets()
  const nodes = view.nodes()
  const rank = (address: string) => {
    const at = opened.findIndex((m) => m.address === address)
    return at === -1 ? opened.length : at
  }
  return marketAccounts(localnet)
    .map(({pubkey, account}) => {
      const spec = opened.find((m) => m.address === pubkey.toBase58())
      const ofMarket = nodes.filter((n) => n.market === pubkey.toBase58()).map((n) => n.address)
      return marketObject(pubkey, decodeMarketAccount(account.data), spec, ofMarket, view.tokenUsd)
    })
    .sort((a, b) => rank(a.address) - rank(b.address) || a.address.localeCompare(b.address))
}

function marketObject(
  address: PublicKey,
  market: MarketAccount,
  spec: OpenedMarket | undefined,
  nodes: string[],
  tokenUsd: number,
): HostManagerMarket {
  const perSecond = Number(market.jobPrice) / 10 ** TOKEN_DECIMALS
  return {
    address: address.toBase58(),
    slug: spec?.slug ?? address.toBase58(),
    name: spec?.name ?? `localnet market ${address.toBase58().slice(0, 8)}`,
    // The collection of the NFT a node needs; the system program when the market is open to every node.
    sft: market.nodeAccessKey.toBase58(),
    type: spec?.type ?? 'COMMUNITY',
    // The price a host is paid per hour in USD: the chain's price at the localnet's token rate.
    usd_reward_per_hour: roundUsd(perSecond * 3600 * tokenUsd),
    nos_reward_per_second: 0,
    nos_job_price_per_second: perSecond,
    network_fee_percentage: spec?.networkFee ?? 0,
    premium_community_relation: null,
    gpu_types: spec?.gpus ?? [],
    required_images: spec?.requiredImages ?? [],
    required_remote_resources: [],
    nodes,
    client: spec?.client ?? true,
    ...(spec ? {lowest_vram: spec.vram} : {}),
  }
}

/** A market's entry of `/markets/prices` (the network's schema does not declare that answer: this is the localnet's). */
function priceOf(market: HostManagerMarket) {
  const {address, slug, usd_reward_per_hour, nos_job_price_per_second, network_fee_percentage} = market
  return {address, slug, usd_reward_per_hour, nos_job_price_per_second, network_fee_percentage}
}

/** USD to the millionth, so a price reads as it was set rather than as a float's tail. */
function roundUsd(value: number): number {
  return Math.round(value * 1e6) / 1e6
}
