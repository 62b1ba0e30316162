/**
 * What a vault holds and what paying from it costs, read from the chain once for a start or a withdraw: the vault's
 * balances, each market's price and the accounts' rents. floor.ts does the arithmetic.
 */
import {PublicKey} from '@solana/web3.js'

import {JOB_ACCOUNT_SIZE, RUN_ACCOUNT_SIZE} from '../../market/codec/accounts.js'
import {type Balances, readBalances, SIGNATURE_FEE} from '../../market/rpc/balances.js'
import type {MarketNetwork} from '../../market/connect.js'
import {readMarket} from '../../market/jobs/jobs.js'
import {rpcCall} from '../../market/rpc/rpc.js'
import {type ChainCosts, type Floor, type Payer, paying, vaultFloor} from './floor.js'

/** A vault as the chain shows it, with the prices of the markets its deployments list on. */
export interface VaultOnChain {
  balances: Balances
  prices: Map<string, bigint>
  costs: ChainCosts
}

/** Reads the vault's balances, the price of each market named and the rents, in parallel. */
export async function readVaultCosts(net: MarketNetwork, vault: string, markets: string[]): Promise<VaultOnChain> {
  const {connection} = net
  const distinct = [...new Set(markets)]
  const [balances, rents, ...read] = await Promise.all([
    rpcCall(connection, () => readBalances(connection, new PublicKey(vault), net.mint)),
    rpcCall(connection, () =>
      Promise.all(
        [JOB_ACCOUNT_SIZE, RUN_ACCOUNT_SIZE, 0].map((size) => connection.getMinimumBalanceForRentExemption(size)),
      ),
    ),
    ...distinct.map((market) => readMarket(connection, net.programId, new PublicKey(market))),
  ])
  const [jobRent, runRent, vaultRent] = rents.map(BigInt) as [bigint, bigint, bigint]
  return {
    balances,
    prices: new Map(distinct.map((market, i) => [market, read[i]!.jobPrice])),
    costs: {
      jobRent,
      runRent,
      vaultRent,
      signatureFee: SIGNATURE_FEE,
      priorityFee: net.fees.priorityFee ? net.fees.maxPriorityFeeLamports : 0n,
    },
  }
}

/** The vault's floor over `deployments` and what it holds. */
export async function readFloor(
  net: MarketNetwork,
  vault: string,
  deployments: Payer[],
): Promise<{floor: Floor; chain: VaultOnChain}> {
  // Only the markets of those that pay: the others' prices are not needed.
  const markets = deployments.filter((d) => paying(d) !== null).map((d) => d.market)
  const chain = await readVaultCosts(net, vault, markets)
  return {floor: vaultFloor(deployments, chain.prices, chain.costs), chain}
}

/** True when the vault holds the floor. */
export function covers(balances: Pick<Balances, 'tokens' | 'lamports'>, floor: Floor): boolean {
  return balances.tokens >= floor.tokens && balances.lamports >= floor.lamports
}
