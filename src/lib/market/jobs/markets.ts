/** The markets of a network as the chain holds them: listed by discriminator, read one by one, reported. */
import {type Connection, PublicKey} from '@solana/web3.js'
import {base58btc} from 'multiformats/bases/base58'

import type {Network} from '../../network.js'
import {counted} from '../../text/words.js'
import {
  decodeMarketSummary,
  MARKET_ACCOUNT_DATA_SIZE,
  MARKET_ACCOUNT_DISCRIMINATOR,
  type MarketAccount,
  type MarketSummary,
  QueueType,
} from '../codec/accounts.js'
import {type AmountJson, amountJson} from '../../text/amounts.js'
import {TOKEN_DECIMALS} from '../networks.js'
import {alignedColumns, amountText, reportLines} from './report.js'
import {rpcCall} from '../rpc/rpc.js'
import type {CatalogMarket, GpuModel, MarketCatalog} from './market-catalog.js'
import {ExitCode, GpunetError} from '../../errors.js'

/** A market as `market list --json` prints it (docs/networks.md); the host manager's members under its names. */
export interface MarketReport {
  network: Network
  /** The market's address, named as a job's `market` is (docs/json.md). */
  market: string
  /** Deprecated (0.2): `market`, kept for one minor version. */
  address: string
  pricePerSecond: AmountJson
  /** The market's job timeout in seconds: the default duration of a job posted there. */
  jobTimeout: number
  /** Seconds after a job ends before anyone may clean it up. */
  jobExpiration: number
  queue: {kind: 'jobs' | 'nodes' | 'empty'; length: number}
  /** The stake (xNOS) a node needs to work on this market. */
  nodeStakeMinimum: AmountJson
  /** The NFT collection nodes must hold; null when any node may work. */
  accessKey: string | null
  authority: string
  vault: string
  /** The chain's price for an hour, in the token. */
  pricePerHour: AmountJson
  /** Nodes waiting in its queue now (free: a job posted there starts at once), and jobs waiting for a node. */
  freeNodes: number
  queuedJobs: number
  /** USD an hour before the network's fee: the host manager's, else the chain's price at the token's USD price. */
  usdPerHour: number | null
  /**
   * What the network's host manager says of the market, with its names (each null when it could not be read, or
   * does not list the market).
   */
  hostManager: HostManagerFigures
}

/** The host manager's figures of a market, with the network's names. */
export interface HostManagerFigures {
  slug: string | null
  name: string | null
  type: CatalogMarket['type'] | null
  gpu_types: string[] | null
  /** GB: the least VRAM of a node of it. */
  lowest_vram: number | null
  /** USD an hour before the network's fee, as the host manager says (null on a market it prices otherwise). */
  usd_reward_per_hour: number | null
  /** Percent the network adds to the USD price (nothing on chain: a job paid in the token pays the chain's price). */
  network_fee_percentage: number | null
  /**
   * The images the market asks its nodes to hold: what "cached" means to a user on every network (the network
   * publishes these, not each node's cache; a localnet node's own cache only changes how long its pull takes).
   */
  required_images: string[] | null
}

/** The filters of `market list`: a GPU model among its GPU types, a lowest VRAM of at least, a type. */
export interface MarketFilters {
  gpuModel?: string
  minVram?: number
  type?: string
}

/**
 * `market get` adds the queue's keys (jobs waiting for a node, or nodes waiting for a job) and, from the reservations
 * routes, the GPU models its hosts have with their VRAM and free hosts (null when they cannot be read).
 */
export interface MarketDetail extends MarketReport {
  queued: string[]
  gpuModels?: GpuModel[] | null
}

/** Every market of the jobs program, read without their queues' keys; sorted by address. */
export async function listMarkets(
  connection: Connection,
  programId: PublicKey,
): Promise<{address: PublicKey; market: MarketSummary}[]> {
  const accounts = await rpcCall(connection, () =>
    connection.getProgramAccounts(programId, {
      filters: [{memcmp: {offset: 0, bytes: base58btc.baseEncode(MARKET_ACCOUNT_DISCRIMINATOR)}}],
      dataSlice: {offset: 0, length: MARKET_ACCOUNT_DATA_SIZE},
    }),
  )
  return accounts
    .map(({pubkey, account}) => ({address: pubkey, market: decodeMarketSummary(account.data)}))
    .sort((a, b) => a.address.toBase58().localeCompare(b.address.toBase58()))
}

/** The report of a market (a summary, or a full account whose queue is counted). */
export function marketReport(
  network: Network,
  address: PublicKey,
  market: MarketSummary | MarketAccount,
  catalog: Pick<MarketCatalog, 'markets' | 'tokenUsd'> = {markets: null, tokenUsd: null},
): MarketReport {
  const length = 'queue' in market ? market.queue.length : market.queueLength
  const kind = market.queueType === QueueType.JOB ? 'jobs' : market.queueType === QueueType.NODE ? 'nodes' : 'empty'
  const listed = catalog.markets?.get(address.toBase58())
  const perHour = market.jobPrice * 3600n
  const tokensPerHour = Number(perHour) / 10 ** TOKEN_DECIMALS
  const usd =
    typeof listed?.usd_reward_per_hour === 'number'
      ? listed.usd_reward_per_hour
      : listed && catalog.tokenUsd !== null
        ? Math.round(tokensPerHour * catalog.tokenUsd * 1e6) / 1e6
        : null
  return {
    network,
    market: address.toBase58(),
    address: address.toBase58(),
    pricePerSecond: amountJson(market.jobPrice, TOKEN_DECIMALS, 'token'),
    jobTimeout: Number(market.jobTimeout),
    jobExpiration: Number(market.jobExpiration),
    queue: {kind: length === 0 ? 'empty' : kind, length},
    nodeStakeMinimum: amountJson(market.nodeXnosMinimum, TOKEN_DECIMALS, 'token'),
    accessKey: market.nodeAccessKey.equals(PublicKey.default) ? null : market.nodeAccessKey.toBase58(),
    authority: market.authority.toBase58(),
    vault: market.vault.toBase58(),
    pricePerHour: amountJson(perHour, TOKEN_DECIMALS, 'token'),
    freeNodes: kind === 'nodes' ? length : 0,
    queuedJobs: kind === 'jobs' ? length : 0,
    usdPerHour: usd,
    hostManager: {
      slug: listed?.slug ?? null,
      name: listed?.name ?? null,
      type: listed?.type ?? null,
      gpu_types: listed?.gpu_types ?? null,
      lowest_vram: listed?.lowest_vram ?? null,
      usd_reward_per_hour: typeof listed?.usd_reward_per_hour === 'number' ? listed.usd_reward_per_hour : null,
      network_fee_percentage: listed ? (listed.network_fee_percentage ?? 0) : null,
      required_images: listed ? (listed.required_images ?? []) : null,
    },
  }
}

/**
 * The markets that pass the filters; a filter needs the host manager's figures, so without them it is exit 5 (the
 * chain alone cannot say a market's GPU, VRAM or type).
 */
export function filterMarkets(
  markets: MarketReport[],
  filters: MarketFilters,
  catalog: Pick<MarketCatalog, 'markets'>,
): MarketReport[] {
  const asked = Object.entries(filters).filter(([, value]) => value !== undefined)
  if (asked.length === 0) return markets
  if (catalog.markets === null) {
    throw new GpunetError(
      'host_manager_unavailable',
      `cannot filter by ${asked.map(([key]) => key).join(', ')}: the host manager could not be read`,
      {
        exitCode: ExitCode.UNAVAILABLE,
        hint: "the chain alone does not say a market's GPU models, VRAM or type: try again, or point the hostManagerUrl setting (GPUNET_HOST_MANAGER_URL) at a host manager that answers; without filters `market list` prints the chain's figures",
      },
    )
  }
  const model = filters.gpuModel?.toLowerCase()
  return markets.filter(({hostManager: h}) => {
    const vram = h.lowest_vram
    return (
      (model === undefined || (h.gpu_types ?? []).some((gpu) => gpu.toLowerCase() === model)) &&
      (filters.minVram === undefined || (vram !== null && vram >= filters.minVram)) &&
      (filters.type === undefined || h.type === filters.type)
    )
  })
}

/** The full report of one market, its queue's keys included. */
export function marketDetail(
  network: Network,
  address: PublicKey,
  market: MarketAccount,
  catalog?: Pick<MarketCatalog, 'markets' | 'tokenUsd'>,
): MarketDetail {
  return {...marketReport(network, address, market, catalog), queued: market.queue.map((key) => key.toBase58())}
}

/** `market list` as aligned columns, the default market marked with `*`; `-` where the host manager said nothing. */
export function marketRows(markets: MarketReport[], defaultMarket: string): string[] {
  const rows = [
    ['', 'MARKET', 'SLUG', 'TYPE', 'GPU', 'VRAM', 'PRICE/H', 'USD/H', 'FREE', 'QUEUED', 'TIMEOUT', 'ACCESS KEY'],
    ...markets.map((m) => [
      m.market === defaultMarket ? '*' : '',
      m.market,
      m.hostManager.slug ?? '-',
      m.hostManager.type ?? '-',
      gpuText(m.hostManager),
      m.hostManager.lowest_vram === null ? '-' : `${m.hostManager.lowest_vram} GB`,
      String(m.pricePerHour.amount),
      usdText(m),
      String(m.freeNodes),
      String(m.queuedJobs),
      `${m.jobTimeout} s`,
      m.accessKey ?? 'none',
    ]),
  ]
  return alignedColumns(rows)
}

/** The USD price an hour, the network's fee said apart (`0.18 + 10%`); `-` when unknown. */
function usdText(m: MarketReport): string {
  if (m.usdPerHour === null) return '-'
  const fee = m.hostManager.network_fee_percentage ?? 0
  return fee > 0 ? `${m.usdPerHour} + ${fee}%` : String(m.usdPerHour)
}

function gpuText(h: HostManagerFigures): string {
  return h.gpu_types === null || h.gpu_types.length === 0 ? '-' : h.gpu_types.join(', ')
}

/** `market get` as `Label  value` lines. */
export function marketDetailLines(m: MarketDetail): string[] {
  return reportLines([
    ['Network', m.network],
    ['Market', m.market],
    ['Slug', m.hostManager.slug ?? '- (the host manager does not list it)'],
    ['Name', m.hostManager.name ?? '-'],
    ['Type', m.hostManager.type ?? '-'],
    ['GPU models', gpuText(m.hostManager)],
    ['Lowest VRAM', m.hostManager.lowest_vram === null ? '-' : `${m.hostManager.lowest_vram} GB`],
    ['Price', `${amountText(m.pricePerSecond)}/s, ${amountText(m.pricePerHour)}/h`],
    ['USD price', usdLine(m)],
    ['Free nodes', String(m.freeNodes)],
    ...(m.gpuModels ?? []).map((g): [string, string] => [
      `  ${g.name}`,
      `${g.vramGb} GB VRAM, ${g.available} of ${g.nodes} hosts free, ${g.working} working (on every market)`,
    ]),
    ['Queued jobs', String(m.queuedJobs)],
    ['Images', imagesText(m.hostManager.required_images)],
    ['Job timeout', `${m.jobTimeout} s`],
    ['Job expiration', `${m.jobExpiration} s`],
    ['Queue', m.queue.kind === 'empty' ? 'empty' : `${queueText(m.queue)} waiting`],
    ...m.queued.map((key, i): [string, string] => [`  ${i + 1}.`, key]),
    ['Node stake', `${m.nodeStakeMinimum.amount} xNOS at least`],
    ['Access key', m.accessKey ?? 'none (any node)'],
    ['Authority', m.authority],
    ['Vault', m.vault],
  ])
}

function usdLine(m: MarketReport): string {
  if (m.usdPerHour === null) return '-'
  const fee = m.hostManager.network_fee_percentage ?? 0
  if (fee === 0) return `$${m.usdPerHour}/h (no network fee)`
  const total = Math.round(m.usdPerHour * (1 + fee / 100) * 1e6) / 1e6
  return `$${m.usdPerHour}/h + network fee ${fee}% = $${total}/h (a job paid in the token pays the chain's price: no fee on chain)`
}

function imagesText(images: string[] | null): string {
  if (images === null) return '-'
  return images.length === 0 ? 'none required' : images.join(', ')
}

/** A queue as counted words: "1 job", "3 nodes", or "empty". */
function queueText(queue: MarketReport['queue']): string {
  return queue.kind === 'empty' ? 'empty' : counted(queue.length, queue.kind.slice(0, -1))
}
