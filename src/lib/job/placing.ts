/**
 * The need of a job (`--gpu-model`, `--min-vram`, `--max-price`, `--market-type`, and the definition's
 * `required_vram`) read and checked, and the market it is posted to: the placement of lib/market/jobs/placement.ts
 * over the network's markets, or an explicit market checked against the need (docs/jobs.md, "Placement"). Every
 * refusal here comes before anything is uploaded or paid.
 */
import {PublicKey} from '@solana/web3.js'

import type {NetworkDefinition} from '../definition/network-form/types.js'
import {ExitCode, GpunetError} from '../errors.js'
import type {MarketNetwork} from '../market/connect.js'
import {networkCatalog} from '../market/jobs/market-catalog.js'
import {listMarkets} from '../market/jobs/markets.js'
import {placementMarkets} from '../market/jobs/placement-markets.js'
import {
  lacksOf,
  MARKET_TYPES,
  type NeedMarketType,
  needAsks,
  type Payment,
  type Placement,
  placeJob,
  type PlacementNeed,
} from '../market/jobs/placement.js'

/** The need as the flags give it, before it is checked. */
export interface NeedInput {
  gpuModels?: string[]
  minVram?: string | number
  maxPrice?: string | number
  marketType?: string
  /** An explicit market that does not fit the need is exit 3 instead of a warning. */
  strict?: boolean
}

/** Reads the flags' need (exit 2 for a VRAM or price that is not a positive number, or an unknown type). */
export function parseNeed(input: NeedInput): Omit<PlacementNeed, 'images'> {
  const marketType = input.marketType === undefined ? null : input.marketType.toLowerCase()
  if (marketType !== null && !(MARKET_TYPES as readonly string[]).includes(marketType)) {
    throw usage(
      'market_type_invalid',
      `--market-type ${input.marketType} is not a market type`,
      'use premium or community',
    )
  }
  const gpuModels = (input.gpuModels ?? []).map((m) => m.trim())
  if (gpuModels.some((m) => m === ''))
    throw usage('gpu_model_invalid', '--gpu-model is empty', 'name a GPU model: gpunet market list')
  return {
    gpuModels,
    minVram: positive(input.minVram, '--min-vram', 'GB'),
    maxPrice: positive(input.maxPrice, '--max-price', 'per hour'),
    marketType: marketType as NeedMarketType | null,
  }
}

function positive(value: string | number | undefined, flag: string, unit: string): number | null {
  if (value === undefined) return null
  const text = String(value).trim()
  const number = /^\d+(\.\d+)?$|^\.\d+$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isFinite(number) || number <= 0) {
    throw usage(
      `${flag.slice(2).replace('-', '_')}_invalid`,
      `${flag} ${text} is not a positive number`,
      `give ${flag} a number above 0 (${unit}), e.g. ${flag} 40`,
    )
  }
  return number
}

function usage(code: string, message: string, hint: string): GpunetError {
  return new GpunetError(code, message, {exitCode: ExitCode.USAGE, hint})
}

/**
 * What the definition needs (the spec's `required_vram` of an operation and `meta.system_resources.required_vram`,
 * the largest) and its images.
 */
export function definitionNeed(document: NetworkDefinition | Record<string, unknown>): {
  minVram: number | null
  images: string[]
} {
  const doc = document as {
    meta?: {system_resources?: Record<string, unknown>}
    global?: {image?: unknown}
    ops?: {args?: {image?: unknown; required_vram?: unknown}}[]
  }
  const vrams: number[] = []
  const fromMeta = doc.meta?.system_resources?.required_vram
  const metaVram = typeof fromMeta === 'string' ? Number(fromMeta) : fromMeta
  if (typeof metaVram === 'number' && Number.isFinite(metaVram) && metaVram > 0) vrams.push(metaVram)
  const images = new Set<string>()
  if (typeof doc.global?.image === 'string') images.add(doc.global.image)
  for (const op of Array.isArray(doc.ops) ? doc.ops : []) {
    const vram = op?.args?.required_vram
    if (typeof vram === 'number' && Number.isFinite(vram) && vram > 0) vrams.push(vram)
    if (typeof op?.args?.image === 'string') images.add(op.args.image)
  }
  return {minVram: vrams.length > 0 ? Math.max(...vrams) : null, images: [...images]}
}

/** The need of the flags joined with the definition's: the larger VRAM, the definition's images. */
export function jobNeed(
  flags: Omit<PlacementNeed, 'images'>,
  document: NetworkDefinition | Record<string, unknown>,
): PlacementNeed {
  const fromDefinition = definitionNeed(document)
  const vrams = [flags.minVram, fromDefinition.minVram].filter((v): v is number => v !== null)
  return {...flags, minVram: vrams.length > 0 ? Math.max(...vrams) : null, images: fromDefinition.images}
}

/** Where a job is posted: the market, the placement that chose it (null for an explicit or the default market). */
export interface MarketChoice {
  /** Null: the network's default market (the need could not be checked). */
  market: PublicKey | null
  placement: Placement | null
  warnings: string[]
}

/**
 * The market a job is posted to. An explicit market (a flag or a configured setting) is used as given, checked
 * against a need the flags or the definition state (a warning when it does not fit, exit 3 with `strict`); with no
 * explicit market and a need, placement picks one (exit 3 naming the nearest when none fits); with neither, null:
 * the network's default market, as before.
 */
export async function chooseMarket(
  net: Pick<MarketNetwork, 'name' | 'connection' | 'programId' | 'hostManagerUrl'>,
  options: {
    explicit: PublicKey | null
    need: PlacementNeed
    payment: Payment
    strict: boolean
    /**
     * Whether flags asked for the need (else only the definition's `required_vram` did): without the host manager
     * a need of the flags is exit 5, the definition's alone leaves the market as it was, with a warning.
     */
    flagsAsked?: boolean
    note: (line: string) => void
  },
): Promise<MarketChoice | null> {
  const {explicit, need, payment, note} = options
  if (!needAsks(need)) return null
  const unchecked = (why: string): MarketChoice => {
    const warning = `Warning: the definition's required_vram (${need.minVram} GB) was not checked against the markets: ${why}`
    note(warning)
    return {market: explicit ?? null, placement: null, warnings: [warning.replace(/^Warning: /, '')]}
  }
  const [chain, catalog] = await Promise.all([
    // A post the definition alone asked to place is not refused for an RPC node that lists no markets (some limit
    // getProgramAccounts): it goes where it went before placement existed.
    listMarkets(net.connection, net.programId).catch((error: unknown) => {
      if (options.flagsAsked === false) return null
      throw error
    }),
    networkCatalog(net.hostManagerUrl),
  ])
  for (const warning of catalog.warnings) note(warning)
  if (chain === null) return unchecked("the RPC node did not list the network's markets")
  const asksCatalog =
    need.gpuModels.length > 0 ||
    need.minVram !== null ||
    need.marketType !== null ||
    (need.maxPrice !== null && payment === 'credits')
  if (asksCatalog && catalog.markets === null && options.flagsAsked === false) {
    return unchecked('the host manager could not be read')
  }
  if (asksCatalog && catalog.markets === null) {
    throw new GpunetError('host_manager_unavailable', 'cannot place the job: the host manager could not be read', {
      exitCode: ExitCode.UNAVAILABLE,
      hint: "the chain alone does not say a market's GPU models, VRAM or type: try again, point the hostManagerUrl setting (GPUNET_HOST_MANAGER_URL) at one that answers, or name the market with --market",
    })
  }
  const markets = placementMarkets(net.name, chain, catalog)
  checkGpuModels(
    need.gpuModels,
    markets.flatMap((m) => m.gpuModels ?? []),
  )
  if (explicit !== null) {
    const market = markets.find((m) => m.market === explicit.toBase58())
    if (!market) return {market: explicit, placement: null, warnings: []}
    const lacks = lacksOf(market, need, payment)
    if (lacks.length === 0) return {market: explicit, placement: null, warnings: []}
    const message = `market ${market.slug ?? market.market} does not fit the job's need: ${lacks.join('; ')}`
    if (options.strict) {
      throw new GpunetError('market_does_not_fit', message, {
        exitCode: ExitCode.INVALID_INPUT,
        hint: 'leave out --market to let gpunet place the job, or drop --strict to post there all the same',
        fields: {market: market.market, lacks},
      })
    }
    note(`Warning: ${message} (posted there all the same: --market; --strict refuses it)`)
    return {market: explicit, placement: null, warnings: [message]}
  }
  const placement = placeJob(markets, need, payment)
  if (placement.chosen === null) {
    const nearest = placement.nearest
    const name = nearest ? (nearest.slug ?? nearest.market) : null
    throw new GpunetError(
      'no_market_fits',
      nearest
        ? `no market fits the job: the nearest, ${name}, lacks ${nearest.lacks.join('; ')}`
        : 'no market fits the job: the network lists no market',
      {
        exitCode: ExitCode.INVALID_INPUT,
        hint: "ask for less (gpunet market list shows each market's GPU, VRAM, type and price), or name a market with --market",
        fields: {
          nearest: nearest ? {market: nearest.market, slug: nearest.slug, lacks: nearest.lacks} : null,
          placement: placementJson(placement),
        },
      },
    )
  }
  return {market: new PublicKey(placement.chosen), placement, warnings: []}
}

/** Exit 2 for a GPU model no market lists, with the known ones. */
export function checkGpuModels(asked: string[], known: string[]): void {
  const names = new Set(known.map((m) => m.toLowerCase()))
  const unknown = asked.filter((m) => !names.has(m.toLowerCase()))
  if (unknown.length === 0) return
  const list = [...new Set(known)].sort()
  throw new GpunetError(
    'gpu_model_unknown',
    `no market lists the GPU model ${unknown.map((m) => `"${m}"`).join(', ')}`,
    {
      exitCode: ExitCode.USAGE,
      hint: list.length > 0 ? `the known GPU models: ${list.join(', ')}` : 'the host manager lists no GPU model',
      fields: {unknown, known: list},
    },
  )
}

/** The placement as `--json` prints it (docs/json.md, `placement`). */
export function placementJson(placement: Placement): {[key: string]: import('../errors.js').JsonValue} {
  return JSON.parse(JSON.stringify(placement)) as {[key: string]: import('../errors.js').JsonValue}
}
