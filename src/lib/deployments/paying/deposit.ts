/** What a deployment's vault must hold to start: one timeout of every replica, their accounts' rent and the fees. */
import {PublicKey} from '@solana/web3.js'

import {JOB_ACCOUNT_SIZE, RUN_ACCOUNT_SIZE} from '../../market/codec/accounts.js'
import {type Balances, readBalances, SIGNATURE_FEE} from '../../market/rpc/balances.js'
import type {MarketNetwork} from '../../market/connect.js'
import {readMarket} from '../../market/jobs/jobs.js'
import {rpcCall} from '../../market/rpc/rpc.js'
import {jobTimeoutSeconds} from '../strategies/index.js'
import type {DeploymentRow} from '../types.js'

/** Signatures of a `list`: the vault (fee payer), the job and the run. */
const LIST_SIGNATURES = 3n

export interface Deposit {
  /** Token base units: the market's price x the job timeout x replicas. */
  tokens: bigint
  /** Lamports: each job's and run's rent and its `list` fee (the priority fee cap too when priority fees are on), and the vault's own rent-exempt minimum. */
  lamports: bigint
  balances: Balances
}

/** The deposit one timeout of the deployment needs, and what its vault holds. */
export async function requiredDeposit(
  net: MarketNetwork,
  deployment: Pick<DeploymentRow, 'market' | 'replicas' | 'timeout' | 'time_scale' | 'vault'>,
): Promise<Deposit> {
  const {connection} = net
  const [market, balances, rents] = await Promise.all([
    readMarket(connection, net.programId, new PublicKey(deployment.market)),
    rpcCall(connection, () => readBalances(connection, new PublicKey(deployment.vault), net.mint)),
    rpcCall(connection, () =>
      Promise.all(
        [JOB_ACCOUNT_SIZE, RUN_ACCOUNT_SIZE, 0].map((size) => connection.getMinimumBalanceForRentExemption(size)),
      ),
    ),
  ])
  const [jobRent, runRent, vaultRent] = rents.map(BigInt) as [bigint, bigint, bigint]
  const replicas = BigInt(deployment.replicas)
  const fee = SIGNATURE_FEE * LIST_SIGNATURES + (net.fees.priorityFee ? net.fees.maxPriorityFeeLamports : 0n)
  return {
    tokens: market.jobPrice * BigInt(jobTimeoutSeconds(deployment)) * replicas,
    lamports: (jobRent + runRent + fee) * replicas + vaultRent,
    balances,
  }
}

/** True when the vault holds the deposit. */
export function covers(deposit: Deposit): boolean {
  return deposit.balances.tokens >= deposit.tokens && deposit.balances.lamports >= deposit.lamports
}
