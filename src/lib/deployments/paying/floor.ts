/**
 * What a vault must keep for the deployments that pay from it, and so what a withdraw may take
 * (docs/deployment-manager.md, "The floor"). One vault may pay for many deployments (the owner's shared vault), so
 * a start and a withdraw both count every deployment on it, not only the one named.
 *
 * Each replica of a deployment that pays (STARTING, RUNNING, INSUFFICIENT_FUNDS once started) makes one payment
 * next, whatever its strategy: a listing (the first, SCHEDULED's next time, INFINITE's rotation or replacement,
 * SIMPLE's shortfall after a scale) or an extension (SIMPLE-EXTEND). Both deposit one timeout's tokens; a listing
 * also pays the rent of the job's and run's accounts and three signatures, so a listing is what is kept. The old
 * job a rotation or a scale-down stops costs one more signature. A STOPPING deployment only stops jobs: one
 * signature a replica. The vault keeps its own rent-exempt minimum while anything pays from it (a fee payer left
 * under it fails its transaction). Priority fees, when on, count at their cap in every transaction.
 */
import {jobTimeoutSeconds} from '../strategies/index.js'
import type {DeploymentRow} from '../types.js'

/** Token base units and lamports. */
export interface Cost {
  tokens: bigint
  lamports: bigint
}

/** The chain's prices of paying: rents, and a transaction's fees. */
export interface ChainCosts {
  jobRent: bigint
  runRent: bigint
  /** A system account's rent-exempt minimum: what a vault keeps while it pays. */
  vaultRent: bigint
  /** Lamports of one signature. */
  signatureFee: bigint
  /** The priority fee cap of one transaction (0 when priority fees are off). */
  priorityFee: bigint
}

/** What of a deployment the floor reads. */
export type Payer = Pick<
  DeploymentRow,
  'id' | 'status' | 'started_at' | 'replicas' | 'timeout' | 'time_scale' | 'market'
>

/** Signatures of a `list`: the vault (fee payer), the job and the run. */
export const LIST_SIGNATURES = 3n

/** How a deployment pays from its vault next: listings (or extensions), stops only, or not at all. */
export function paying(deployment: Pick<Payer, 'status' | 'started_at'>): 'lists' | 'stops' | null {
  if (deployment.status === 'STOPPING') return 'stops'
  if (deployment.status === 'STARTING' || deployment.status === 'RUNNING') return 'lists'
  // A start refused for want of the deposit listed nothing and lists nothing until started again.
  if (deployment.status === 'INSUFFICIENT_FUNDS' && deployment.started_at !== null) return 'lists'
  return null
}

/** What one deployment's replicas need for their next payment each (its own share of the floor). */
export function deploymentNeeds(deployment: Payer, pricePerSecond: bigint, costs: ChainCosts): Cost {
  const how = paying(deployment)
  const replicas = BigInt(deployment.replicas)
  const stopFee = costs.signatureFee + costs.priorityFee
  if (how === 'stops') return {tokens: 0n, lamports: stopFee * replicas}
  if (how === null) return {tokens: 0n, lamports: 0n}
  const listFee = costs.signatureFee * LIST_SIGNATURES + costs.priorityFee
  return {
    tokens: pricePerSecond * BigInt(jobTimeoutSeconds(deployment)) * replicas,
    lamports: (costs.jobRent + costs.runRent + listFee + stopFee) * replicas,
  }
}

/** What the vault keeps for every deployment on it; `payers` names those that pay (empty: it may be emptied). */
export interface Floor extends Cost {
  payers: string[]
}

/** The floor of a vault: every paying deployment's needs, plus the vault's rent-exempt minimum while any pays. */
export function vaultFloor(deployments: Payer[], prices: ReadonlyMap<string, bigint>, costs: ChainCosts): Floor {
  const floor: Floor = {tokens: 0n, lamports: 0n, payers: []}
  for (const deployment of deployments) {
    if (paying(deployment) === null) continue
    const price = prices.get(deployment.market)
    if (price === undefined) throw new Error(`no price read for the market ${deployment.market}`)
    const needs = deploymentNeeds(deployment, price, costs)
    floor.tokens += needs.tokens
    floor.lamports += needs.lamports
    floor.payers.push(deployment.id)
  }
  if (floor.payers.length > 0) floor.lamports += costs.vaultRent
  return floor
}

/** What a vault holds. */
export interface Held extends Cost {
  hasTokenAccount: boolean
}

/** A withdraw's amounts: `closeTokenAccount` when it empties the token account of a vault nothing pays from. */
export interface WithdrawAmounts extends Cost {
  closeTokenAccount: boolean
}

/** Why a withdraw is refused: more than the vault may give, or a remainder under the rent-exempt minimum. */
export interface WithdrawRefusal {
  refused: 'exceeds_available' | 'under_rent' | 'nothing'
  /** What the vault may give. */
  available: Cost
}

/** What the vault may give: what it holds above its floor. */
export function available(held: Cost, floor: Cost): Cost {
  const above = (has: bigint, keeps: bigint) => (has > keeps ? has - keeps : 0n)
  return {tokens: above(held.tokens, floor.tokens), lamports: above(held.lamports, floor.lamports)}
}

/**
 * The amounts of a withdraw: `ask` null takes everything above the floor; an ask takes exactly that, refused
 * beyond it. A remainder of lamports under the rent-exempt minimum cannot stay (the transfer would fail), so an ask
 * leaving one is refused too; everything, with nothing paying, leaves none.
 */
export function withdrawAmounts(
  held: Held,
  floor: Floor,
  ask: Cost | null,
  vaultRent: bigint,
): WithdrawAmounts | WithdrawRefusal {
  const may = available(held, floor)
  const take = ask ?? may
  if (take.tokens > may.tokens || take.lamports > may.lamports) return {refused: 'exceeds_available', available: may}
  const left = held.lamports - take.lamports
  if (take.lamports > 0n && left > 0n && left < vaultRent) return {refused: 'under_rent', available: may}
  if (take.tokens === 0n && take.lamports === 0n && !(held.hasTokenAccount && floor.payers.length === 0))
    return {refused: 'nothing', available: may}
  // The token account goes (its rent to the owner) only once it is emptied and nothing lists from the vault again.
  const closeTokenAccount = held.hasTokenAccount && floor.payers.length === 0 && take.tokens === held.tokens
  return {tokens: take.tokens, lamports: take.lamports, closeTokenAccount}
}
