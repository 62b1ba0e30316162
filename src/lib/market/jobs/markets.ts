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

/** A market as `market list --json` prints it (docs/networks.md). */
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
}

/** `market get` adds the queue's keys: jobs waiting for a node, or nodes waiting for a job. */
export interface MarketDetail extends MarketReport {
  queued: string[]
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
): MarketReport {
  const length = 'queue' in market ? market.queue.length : market.queueLength
  const kind = market.queueType === QueueType.JOB ? 'jobs' : market.queueType === QueueType.NODE ? 'nodes' : 'empty'
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
  }
}

/** The full report of one market, its queue's keys included. */
export function marketDetail(network: Network, address: PublicKey, market: MarketAccount): MarketDetail {
  return {...marketReport(network, address, market), queued: market.queue.map((key) => key.toBase58())}
}

/** `market list` as aligned columns, the default market marked with `*`. */
export function marketRows(markets: MarketReport[], defaultMarket: string): string[] {
  const rows = [
    ['', 'MARKET', 'PRICE/S', 'TIMEOUT', 'QUEUE', 'NODE STAKE', 'ACCESS KEY'],
    ...markets.map((m) => [
      m.market === defaultMarket ? '*' : '',
      m.market,
      String(m.pricePerSecond.amount),
      `${m.jobTimeout} s`,
      queueText(m.queue),
      String(m.nodeStakeMinimum.amount),
      m.accessKey ?? 'none',
    ]),
  ]
  return alignedColumns(rows)
}

/** `market get` as `Label  value` lines. */
export function marketDetailLines(m: MarketDetail): string[] {
  return reportLines([
    ['Network', m.network],
    ['Market', m.market],
    ['Price', `${amountText(m.pricePerSecond)}/s`],
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

/** A queue as counted words: "1 job", "3 nodes", or "empty". */
function queueText(queue: MarketReport['queue']): string {
  return queue.kind === 'empty' ? 'empty' : counted(queue.length, queue.kind.slice(0, -1))
}
