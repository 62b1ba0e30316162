/**
 * The markets a localnet keeps in its data directory (`markets.json`): the spec it was started with and each market's
 * address on its chain. A chain keeps its markets across starts: a markets file that says otherwise is refused (the
 * markets are on chain, with their queues and jobs), with a hint to `localnet reset --markets`, which makes a new
 * chain with them; `reset` alone keeps them for the new chain. A chain made before markets files gets the default
 * markets added at its next start.
 */
import {existsSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'

import {PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../../errors.js'
import {MARKET_ACCOUNT_DISCRIMINATOR} from '../../market/codec/accounts.js'
import {localnetFiles} from '../paths.js'
import type {Localnet, MarketTerms} from '../state.js'
import {DEFAULT_MARKETS} from './default-markets.js'
import {DEFAULT_MARKET_SLUG, type MarketSpec, type MarketsSpec} from './spec.js'

/** A market of the localnet, with its address on this chain. */
export interface OpenedMarket extends MarketSpec {
  address: string
}

interface MarketsRecord extends MarketsSpec {
  /** Each market's address on the chain of this data directory, by slug. */
  addresses: Record<string, string>
}

/** The markets this data directory keeps, without their addresses; null when it keeps none. */
export function keptMarkets(dataDir: string): MarketsSpec | null {
  const record = readRecord(dataDir)
  if (!record) return null
  const {version, images, defaultImageSize, markets} = record
  return {version, images, defaultImageSize, markets}
}

/** Keeps `spec` for the next start of this data directory (after a reset: no addresses, a new chain opens them). */
export function keepMarkets(dataDir: string, spec: MarketsSpec): void {
  writeRecord(dataDir, {...spec, addresses: {}})
}

/**
 * Refuses a markets file given for a chain that exists with other markets (exit 2); a chain made before markets
 * files (none kept) takes it, its markets added.
 */
export function checkMarketsGiven(dataDir: string, given: MarketsSpec, file: string): void {
  if (!existsSync(localnetFiles(dataDir).genesis)) return
  const kept = keptMarkets(dataDir)
  if (kept === null || sameMarkets(kept, given)) return
  throw new GpunetError(
    'localnet_markets_differ',
    `the localnet in ${dataDir} keeps other markets than ${file} says: a chain keeps its markets across starts`,
    {
      exitCode: ExitCode.USAGE,
      hint: `\`gpunet localnet reset --markets ${file}\` makes a new chain with these markets (it wipes the chain), or leave --markets out to start with the markets it has`,
      fields: {dataDir, file},
    },
  )
}

/** The markets a start uses: the given file's, else those kept, else the defaults. */
export function marketsInForce(dataDir: string, given: MarketsSpec | undefined): MarketsSpec {
  return given ?? keptMarkets(dataDir) ?? DEFAULT_MARKETS
}

/** The terms the default market of `spec` is opened with. */
export function defaultMarketTerms(spec: MarketsSpec): MarketTerms {
  const market = spec.markets.find((m) => m.slug === DEFAULT_MARKET_SLUG) ?? spec.markets[0]!
  return marketTerms(market)
}

/**
 * Opens each market of `spec` that this chain lacks with the jobs program's `open` (the default market is the one
 * the chain was created with) and keeps their addresses; returns them, the default market first.
 */
export function openLocalnetMarkets(localnet: Localnet, dataDir: string, spec: MarketsSpec): OpenedMarket[] {
  const addresses = {...readRecord(dataDir)?.addresses}
  const opened = spec.markets.map((market): OpenedMarket => {
    if (market.slug === DEFAULT_MARKET_SLUG) return {...market, address: localnet.market.toBase58()}
    const known = addresses[market.slug]
    if (known && isMarketAccount(localnet, known)) return {...market, address: known}
    return {...market, address: localnet.openMarket(marketTerms(market)).toBase58()}
  })
  writeRecord(dataDir, {...spec, addresses: Object.fromEntries(opened.map((m) => [m.slug, m.address]))})
  return opened
}

function marketTerms(market: MarketSpec): MarketTerms {
  return {jobPrice: BigInt(market.priceUnits), jobTimeout: BigInt(market.timeout)}
}

function isMarketAccount(localnet: Localnet, address: string): boolean {
  let key: PublicKey
  try {
    key = new PublicKey(address)
  } catch {
    return false
  }
  const account = localnet.chain.account(key)
  return (
    account !== null &&
    account.owner.equals(localnet.chain.programId) &&
    Buffer.from(account.data.subarray(0, 8)).equals(MARKET_ACCOUNT_DISCRIMINATOR)
  )
}

/** Two specs alike in what a chain holds and its nodes run (written in one member order: compared as JSON). */
function sameMarkets(a: MarketsSpec, b: MarketsSpec): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

function readRecord(dataDir: string): MarketsRecord | null {
  try {
    return JSON.parse(readFileSync(localnetFiles(dataDir).markets, 'utf8')) as MarketsRecord
  } catch {
    return null
  }
}

function writeRecord(dataDir: string, record: MarketsRecord): void {
  const file = localnetFiles(dataDir).markets
  mkdirSync(dataDir, {recursive: true})
  writeFileSync(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`)
  renameSync(`${file}.tmp`, file)
}
