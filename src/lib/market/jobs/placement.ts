/**
 * Where a job runs when its poster states a need instead of a market (docs/jobs.md, "Placement"). A pure function
 * over the markets with their figures (read by markets.ts and market-catalog.ts), the need and how the job pays, so
 * every choice can be tested without a network. The order, each step deciding only between the markets the one
 * before left tied:
 *   1. fits: a GPU model asked for, the VRAM, the type and the price cap (a market that does not fit is never chosen);
 *   2. has a free node now (a job posted there starts at once; elsewhere it waits in the queue);
 *   3. costs least per hour, by the way the job pays: in the token, the chain's price (the network adds no fee on
 *      chain); with credits, the USD price with the network's fee;
 *   4. lists the job's image among its required images (its nodes hold it: no pull);
 * then the market's address, so that one answer is given for one input.
 */
import type {MarketReport} from './markets.js'
import {alignedColumns} from './report.js'

/** The market types a need may ask for (`--market-type`). */
export const MARKET_TYPES = ['premium', 'community'] as const

/**
 * The shortest queue timeout of a job's failover or a deployment's move, in seconds: a node takes a queued job within
 * seconds, but a minute lets a market's nodes free up before the job leaves it.
 */
export const MIN_QUEUE_TIMEOUT_S = 60
export type NeedMarketType = (typeof MARKET_TYPES)[number]

/** How the job pays: the wallet's tokens at the chain's price, or credits at the USD price with its fee. */
export type Payment = 'token' | 'credits'

/** What the job needs of a market; an empty need fits every market. */
export interface PlacementNeed {
  /** Any of these GPU models (the network's names, any case); empty: any. */
  gpuModels: string[]
  /** GB of VRAM at least: the larger of `--min-vram` and the definition's `required_vram`. */
  minVram: number | null
  /** The most per hour, in the token (or in USD with credits). */
  maxPrice: number | null
  marketType: NeedMarketType | null
  /** The job's images: a market listing them among its required images is preferred between equal prices. */
  images: string[]
}

/** A market as placement reads it: the chain's figures and the host manager's (null where it said nothing). */
export interface PlacementMarket {
  market: string
  slug: string | null
  type: string | null
  gpuModels: string[] | null
  /** GB: the least VRAM of a node of it. */
  lowestVram: number | null
  tokenPerHour: number
  /** USD an hour before the network's fee. */
  usdPerHour: number | null
  networkFeePercent: number
  freeNodes: number
  requiredImages: string[] | null
}

/** One market of the placement table: chosen or passed over, and why. */
export interface PlacementRow {
  market: string
  slug: string | null
  /** 1 for the chosen market, then the runners-up in the order of placement; unfit markets after them. */
  rank: number
  chosen: boolean
  fits: boolean
  freeNodes: number
  /** Per hour as the job pays (null: a USD price the host manager does not give). */
  pricePerHour: number | null
  currency: 'token' | 'USD'
  /** The job's images this market lists among its required images. */
  imagesListed: number
  /** What it lacks of the need (empty when it fits). */
  lacks: string[]
  /** Why it was chosen or passed over, in words. */
  reason: string
}

/** The placement of a job: the chosen market (null when none fits), the nearest unfit one, every market's row. */
export interface Placement {
  chosen: string | null
  /** When nothing fits: the market that lacks least, and what it lacks. */
  nearest: {market: string; slug: string | null; lacks: string[]} | null
  payment: Payment
  need: PlacementNeed
  markets: PlacementRow[]
}

/** True when the need asks anything of a market (placement runs, or an explicit market is checked). */
export function needAsks(need: PlacementNeed): boolean {
  return need.gpuModels.length > 0 || need.minVram !== null || need.maxPrice !== null || need.marketType !== null
}

/** The price per hour of a market as the job pays it; null when credits pay and no USD price is known. */
export function pricePerHour(market: PlacementMarket, payment: Payment): number | null {
  if (payment === 'token') return market.tokenPerHour
  if (market.usdPerHour === null) return null
  return Math.round(market.usdPerHour * (1 + market.networkFeePercent / 100) * 1e6) / 1e6
}

/** What `market` lacks of `need`, as short phrases (empty: it fits). */
export function lacksOf(market: PlacementMarket, need: PlacementNeed, payment: Payment): string[] {
  const lacks: string[] = []
  if (need.gpuModels.length > 0) {
    const asked = new Set(need.gpuModels.map((m) => m.toLowerCase()))
    if (market.gpuModels === null) lacks.push('GPU models unknown')
    else if (!market.gpuModels.some((m) => asked.has(m.toLowerCase()))) {
      lacks.push(`GPU ${market.gpuModels.join(', ') || 'none'}, not ${need.gpuModels.join(' or ')}`)
    }
  }
  if (need.minVram !== null) {
    if (market.lowestVram === null) lacks.push('VRAM unknown')
    else if (market.lowestVram < need.minVram) lacks.push(`${market.lowestVram} GB VRAM < ${need.minVram} GB`)
  }
  if (need.marketType !== null && (market.type ?? '').toLowerCase() !== need.marketType) {
    lacks.push(`type ${market.type ?? 'unknown'}, not ${need.marketType.toUpperCase()}`)
  }
  if (need.maxPrice !== null) {
    const price = pricePerHour(market, payment)
    const unit = payment === 'token' ? 'tokens' : 'USD'
    if (price === null) lacks.push('no USD price')
    else if (price > need.maxPrice) lacks.push(`${price} ${unit}/h > ${need.maxPrice} ${unit}/h`)
  }
  return lacks
}

/** How many of the job's images the market lists among its required images. */
function imagesListed(market: PlacementMarket, images: string[]): number {
  const listed = new Set(market.requiredImages ?? [])
  return new Set(images.filter((image) => listed.has(image))).size
}

/**
 * Compares two fitting markets by the order of placement (negative: `a` first): a free node, then the lower price
 * (an unknown price last), then more of the job's images listed, then the address.
 */
export function comparePlacement(
  a: PlacementMarket,
  b: PlacementMarket,
  need: PlacementNeed,
  payment: Payment,
): number {
  const free = Number(b.freeNodes > 0) - Number(a.freeNodes > 0)
  if (free !== 0) return free
  const pa = pricePerHour(a, payment)
  const pb = pricePerHour(b, payment)
  if (pa !== pb) {
    if (pa === null) return 1
    if (pb === null) return -1
    return pa - pb
  }
  const images = imagesListed(b, need.images) - imagesListed(a, need.images)
  if (images !== 0) return images
  return a.market < b.market ? -1 : a.market > b.market ? 1 : 0
}

/** Places a job: the first fitting market by the order of placement, and every market's row with its reason. */
export function placeJob(markets: PlacementMarket[], need: PlacementNeed, payment: Payment): Placement {
  const judged = markets.map((market) => ({market, lacks: lacksOf(market, need, payment)}))
  const fitting = judged.filter((j) => j.lacks.length === 0).map((j) => j.market)
  fitting.sort((a, b) => comparePlacement(a, b, need, payment))
  // The unfit ones by how little they lack, then as fitting ones would be ordered: the first is the nearest.
  const unfit = judged.filter((j) => j.lacks.length > 0)
  unfit.sort((a, b) => a.lacks.length - b.lacks.length || comparePlacement(a.market, b.market, need, payment))
  const chosen = fitting[0] ?? null
  const currency = payment === 'token' ? 'token' : 'USD'
  const row = (market: PlacementMarket, rank: number, lacks: string[], reason: string): PlacementRow => ({
    market: market.market,
    slug: market.slug,
    rank,
    chosen: market === chosen,
    fits: lacks.length === 0,
    freeNodes: market.freeNodes,
    pricePerHour: pricePerHour(market, payment),
    currency,
    imagesListed: imagesListed(market, need.images),
    lacks,
    reason,
  })
  const rows = [
    ...fitting.map((market, i) =>
      row(
        market,
        i + 1,
        [],
        chosen === market ? chosenReason(market, fitting, need, payment) : passedReason(market, chosen!, need, payment),
      ),
    ),
    ...unfit.map(({market, lacks}, i) =>
      row(market, fitting.length + i + 1, lacks, `does not fit: ${lacks.join('; ')}`),
    ),
  ]
  const first = unfit[0]
  const nearest =
    chosen === null && first ? {market: first.market.market, slug: first.market.slug, lacks: first.lacks} : null
  return {chosen: chosen?.market ?? null, nearest, payment, need, markets: rows}
}

function priceText(price: number | null, payment: Payment): string {
  if (price === null) return 'no USD price'
  return payment === 'token' ? `${price} tokens/h` : `$${price}/h with the network fee`
}

function chosenReason(
  market: PlacementMarket,
  fitting: PlacementMarket[],
  need: PlacementNeed,
  payment: Payment,
): string {
  const free =
    market.freeNodes > 0
      ? `${market.freeNodes} free node${market.freeNodes === 1 ? '' : 's'}`
      : 'no free node (none that fits has one: the job waits in its queue)'
  const parts = [`fits, ${free}`, priceText(pricePerHour(market, payment), payment)]
  if (fitting.length > 1) {
    const rivals = fitting.filter((m) => m !== market && m.freeNodes > 0 === market.freeNodes > 0)
    if (rivals.length > 0)
      parts.push(
        rivals.every((m) => pricePerHour(m, payment) === pricePerHour(market, payment))
          ? 'same price as the next'
          : 'cheapest',
      )
  }
  if (imagesListed(market, need.images) > 0) parts.push('lists the image')
  return parts.join(', ')
}

function passedReason(market: PlacementMarket, chosen: PlacementMarket, need: PlacementNeed, payment: Payment): string {
  if (market.freeNodes === 0 && chosen.freeNodes > 0) return 'fits, but no free node now'
  const price = pricePerHour(market, payment)
  const chosenPrice = pricePerHour(chosen, payment)
  if (price !== chosenPrice) return `fits, but costs more: ${priceText(price, payment)}`
  if (imagesListed(market, need.images) < imagesListed(chosen, need.images)) {
    return 'fits at the same price, but does not list the image'
  }
  return 'fits, same price and images: the address decided'
}

/** The placement market of a `market list` report. */
export function placementMarket(report: MarketReport): PlacementMarket {
  const h = report.hostManager
  return {
    market: report.market,
    slug: h.slug,
    type: h.type,
    gpuModels: h.gpu_types,
    lowestVram: h.lowest_vram,
    tokenPerHour: report.pricePerHour.amount,
    usdPerHour: report.usdPerHour,
    networkFeePercent: h.network_fee_percentage ?? 0,
    freeNodes: report.freeNodes,
    requiredImages: h.required_images,
  }
}

/** The placement as a short table: the chosen market, then the runners-up, each with its reason. */
export function placementLines(placement: Placement): string[] {
  const unit = placement.payment === 'token' ? 'TOKENS/H' : 'USD/H'
  const rows = [
    ['', 'MARKET', 'FREE', unit, 'WHY'],
    ...placement.markets.map((row) => [
      row.chosen ? '*' : String(row.rank),
      row.slug ?? row.market,
      String(row.freeNodes),
      row.pricePerHour === null ? '-' : String(row.pricePerHour),
      row.reason,
    ]),
  ]
  return alignedColumns(rows)
}
