/**
 * What the network's host manager says of its markets, beside the chain's figures: each market's slug, name, type,
 * GPU models, lowest VRAM, USD price per hour, network fee and required images (`GET /markets/`), and the token's
 * USD price (`GET /markets/price`). The host manager is a stranger: its answers are bounded in size, checked member
 * by member (a market whose members do not fit is left out), and its text stripped of terminal control sequences.
 * When it cannot be read, the catalog is null and a warning says what is missing: the chain's figures stand alone.
 */
import {array, looseObject, number, string, enum as zodEnum, type infer as Infer, union, null as zodNull} from 'zod'

import {describeHttpFailure, httpFetch, readBodyAtMost} from '../../http/client.js'
import {stripControls} from '../../text/terminal-text.js'

/** The most bytes of a host manager's market list: some hundred markets are a few hundred KB. */
const MAX_MARKETS_BYTES = 4 * 1024 * 1024
/** The most bytes of its token price: `{"price": 0.5}`. */
const MAX_PRICE_BYTES = 4096
/** Waits no longer for a host manager than a user waits for a list. */
const TIMEOUT_MS = 10_000

const text = (max: number) => string().max(max).transform(stripControls)

/** A market as the host manager lists it, the members gpunet reads (others are ignored). */
const HOST_MANAGER_MARKET = looseObject({
  address: string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/),
  slug: text(100),
  name: text(200),
  type: zodEnum(['PREMIUM', 'COMMUNITY', 'OTHER']),
  gpu_types: array(text(200)).max(100),
  lowest_vram: number().nonnegative().nullish(),
  usd_reward_per_hour: union([number().nonnegative(), zodNull()]).optional(),
  network_fee_percentage: number().nonnegative().max(1000).optional(),
  required_images: array(text(500)).max(500).optional(),
})

/** A market of the catalog, with the host manager's names. */
export type CatalogMarket = Infer<typeof HOST_MANAGER_MARKET>

/** The host manager's markets by address, and the token's USD price; null where it could not be read. */
export interface MarketCatalog {
  markets: Map<string, CatalogMarket> | null
  tokenUsd: number | null
  /** What could not be read, and what that leaves out: said on stderr, exit 0. */
  warnings: string[]
}

const GPU_MODEL = looseObject({
  name: text(200),
  vramGb: number().nonnegative(),
  nodes: number().int().nonnegative(),
  available: number().int().nonnegative(),
  working: number().int().nonnegative(),
  markets: array(string().max(100)).max(10_000),
})

/** A GPU model as the reservations routes list it: its VRAM, hosts, free (queued) and working hosts. */
export interface GpuModel {
  name: string
  vramGb: number
  nodes: number
  available: number
  working: number
}

/**
 * The GPU models a market's hosts have, from the reservations routes at `base` (`GET /reservations/gpus`): null,
 * with a warning, when they cannot be read.
 */
export async function marketGpuModels(
  base: string | null,
  market: string,
): Promise<{models: GpuModel[] | null; warnings: string[]}> {
  if (base === null) return {models: null, warnings: []}
  try {
    const body = (await readJson(`${base}/reservations/gpus`, MAX_MARKETS_BYTES)) as {gpus?: unknown}
    if (!Array.isArray(body?.gpus)) throw new Error('its answer has no GPU list')
    const models = body.gpus
      .map((entry) => GPU_MODEL.safeParse(entry))
      .flatMap((parsed) => (parsed.success && parsed.data.markets.includes(market) ? [parsed.data] : []))
      .map(({name, vramGb, nodes, available, working}) => ({name, vramGb, nodes, available, working}))
    return {models, warnings: []}
  } catch (error) {
    const warning = `Warning: the reservations routes at ${base} could not be read (${(error as Error).message}): the market's GPU models and their free hosts are missing (null under --json).`
    return {models: null, warnings: [warning]}
  }
}

/** The catalog of a network's host manager (`hostManagerUrl`); with none set, empty and a warning saying so. */
export async function networkCatalog(hostManagerUrl: string | null): Promise<MarketCatalog> {
  if (hostManagerUrl !== null) return readMarketCatalog(hostManagerUrl)
  const warning =
    'Warning: no host manager is set (the hostManagerUrl setting, GPUNET_HOST_MANAGER_URL): GPU models, VRAM, type, USD prices and required images are missing (null under --json).'
  return {markets: null, tokenUsd: null, warnings: [warning]}
}

/** Reads the catalog of the host manager at `base` (its markets and its token price, both asked at once). */
export async function readMarketCatalog(base: string): Promise<MarketCatalog> {
  const warnings: string[] = []
  const [markets, price] = await Promise.all([
    readJson(`${base}/markets/`, MAX_MARKETS_BYTES).then(
      (body) => marketsOf(body, base, warnings),
      (error: Error) => {
        warnings.push(
          `Warning: the host manager at ${base} could not be read (${error.message}): GPU models, VRAM, type, USD prices and required images are missing (null under --json).`,
        )
        return null
      },
    ),
    readJson(`${base}/markets/price`, MAX_PRICE_BYTES).then(
      (body) => {
        const value = (body as {price?: unknown})?.price
        return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null
      },
      () => null,
    ),
  ])
  return {markets, tokenUsd: price, warnings}
}

function marketsOf(body: unknown, base: string, warnings: string[]): Map<string, CatalogMarket> | null {
  if (!Array.isArray(body)) {
    warnings.push(
      `Warning: the host manager at ${base} answered no market list: GPU models, VRAM, type and USD prices are missing.`,
    )
    return null
  }
  const markets = new Map<string, CatalogMarket>()
  let unfit = 0
  for (const entry of body.slice(0, 10_000)) {
    const parsed = HOST_MANAGER_MARKET.safeParse(entry)
    if (parsed.success) markets.set(parsed.data.address, parsed.data)
    else unfit++
  }
  if (unfit > 0)
    warnings.push(
      `Warning: the host manager at ${base} listed ${unfit} market(s) in a shape gpunet does not read; left out.`,
    )
  return markets
}

/** GETs `url` as JSON, at most `maxBytes`; rejects with words for a failure, a status or a body that is not JSON. */
async function readJson(url: string, maxBytes: number): Promise<unknown> {
  let response
  try {
    response = await httpFetch(url, {headers: {accept: 'application/json'}, signal: AbortSignal.timeout(TIMEOUT_MS)})
  } catch (error) {
    throw new Error(describeHttpFailure(error))
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined)
    throw new Error(`it answered ${response.status}`)
  }
  const bytes = await readBodyAtMost(response, maxBytes)
  if (bytes === 'too_large') throw new Error(`its answer is over ${maxBytes} bytes`)
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'))
  } catch {
    throw new Error('its answer is not JSON')
  }
}
