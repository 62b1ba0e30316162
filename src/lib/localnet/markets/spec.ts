/**
 * The localnet's markets as a markets file describes them (docs/localnet.md, "Markets"): each market's terms on
 * chain, what the network's host manager says of it (type, GPU models, lowest VRAM, required images, network fee)
 * and its nodes, each with its GPU model, VRAM, RAM, country and the images it holds cached. The schema is zod's,
 * strict, so an unknown member is refused where it stands.
 */
import {array, boolean, type infer as Infer, int, number, record, strictObject, string, enum as zodEnum} from 'zod'

/** The slug of the localnet's default market (the one the chain is created with). */
export const DEFAULT_MARKET_SLUG = 'localnet'

/** The market types the network's host manager gives (PREMIUM: validated; COMMUNITY: new or unvalidated). */
export const MARKET_TYPES = ['PREMIUM', 'COMMUNITY', 'OTHER'] as const
export type MarketType = (typeof MARKET_TYPES)[number]

/** The most nodes one entry, one market and the whole localnet may run: each is a node agent of its own. */
export const MAX_NODES = {entry: 16, market: 16, total: 32} as const

const NODE = strictObject({
  /** How many nodes of this description (1 by default). */
  count: int().min(1).max(MAX_NODES.entry).optional(),
  /** The GPU model (the network's `name` metric); the market's first by default. */
  gpu: string().min(1).max(100).optional(),
  /** GB of VRAM; the market's lowest by default. */
  vram: number().positive().max(10_000).optional(),
  /** GB of RAM. */
  ram: number().positive().max(100_000).optional(),
  /** ISO 3166 country code, as the network's `country` metric. */
  country: string()
    .regex(/^[A-Z]{2}$/, 'a two-letter country code such as NL')
    .optional(),
  /** Images the node holds already: a job of one of them starts without a pull. */
  cached: array(string().min(1).max(300)).max(100).optional(),
})

const MARKET = strictObject({
  slug: string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'lowercase letters, digits and dashes, at most 40'),
  name: string().min(1).max(100).optional(),
  type: zodEnum(MARKET_TYPES).optional(),
  /** The GPU models of its nodes (the host manager's `gpu_types`). */
  gpus: array(string().min(1).max(100)).min(1).max(20),
  /** GB: the least VRAM a node of it has (the host manager's `lowest_vram`). */
  vram: number().positive().max(10_000),
  /** Tokens per second, as the chain holds it (6 decimals). */
  price: number().nonnegative().max(1_000_000),
  /** Seconds: the market's job timeout. */
  timeout: int().positive().max(31_536_000).optional(),
  /** Percent added to the USD price by the network (the host manager's `network_fee_percentage`); 0 on chain. */
  networkFee: number().nonnegative().max(100).optional(),
  /** Images the market asks its nodes to hold (`required_images`). */
  requiredImages: array(string().min(1).max(300)).max(100).optional(),
  /** Whether clients may post to it (the host manager's `client`). */
  client: boolean().optional(),
  nodes: array(NODE).max(MAX_NODES.market).optional(),
})

/** The markets file's schema. */
export const MARKETS_FILE = strictObject({
  /** Sizes in MB of the images jobs use, for the simulated pulls; an image not listed is `defaultImageSize`. */
  images: record(string().min(1).max(300), number().positive().max(1_000_000)).optional(),
  /** MB of an image the file does not list. */
  defaultImageSize: number().positive().max(1_000_000).optional(),
  markets: array(MARKET).min(1).max(20),
})

/** A markets file as read. */
export type MarketsFile = Infer<typeof MARKETS_FILE>

/** One node of a market, every member given. */
export interface NodeSpec {
  gpu: string
  vram: number
  ram: number
  country: string
  cached: string[]
}

/** One market, every member given; `nodes` one entry per node. */
export interface MarketSpec {
  slug: string
  name: string
  type: MarketType
  gpus: string[]
  vram: number
  /** Token base units per second. */
  priceUnits: string
  timeout: number
  networkFee: number
  requiredImages: string[]
  client: boolean
  nodes: NodeSpec[]
}

/** The localnet's markets: what the data directory keeps (`markets.json`) and the node agents run. */
export interface MarketsSpec {
  version: 1
  images: Record<string, number>
  defaultImageSize: number
  markets: MarketSpec[]
}

/** The node defaults a file may leave out. */
export const NODE_DEFAULTS = {ram: 32, country: 'NL'} as const

/** MB of an image the file does not size: about a CUDA runtime image. */
export const DEFAULT_IMAGE_MB = 500

/** The job timeout of a market that gives none (the default market's, seconds). */
export const DEFAULT_TIMEOUT = 7200
