/**
 * What the API's routes do to an owner's vaults: the shared vault got or made (the network's `vaults/create`), the
 * vault a new deployment pays from, and a withdraw that leaves the floor of the deployments paying from it.
 */
import {PublicKey} from '@solana/web3.js'

import {generateKeypair} from '../../keys/wallet.js'
import {ApiError, badRequest, notFound, wrongState} from '../../http/api-error.js'
import type {ManagerContext} from '../context.js'
import {readFloor} from '../paying/deposit.js'
import {type Cost, type Floor, type WithdrawRefusal, withdrawAmounts} from '../paying/floor.js'
import {withdrawTransaction} from '../paying/withdraw.js'
import type {DeploymentRow, VaultRow} from '../types.js'

/** The vault a new deployment pays from: the one `vault` names (the owner's, else 404), or the owner's shared one. */
export async function chooseVault(ctx: ManagerContext, owner: string, named: string | undefined): Promise<VaultRow> {
  if (named === undefined) return sharedVault(ctx, owner)
  const row = await ctx.store.vault(named)
  // Another owner's vault is not found either, as the network answers.
  if (!row || row.owner !== owner)
    throw new ApiError(
      404,
      'not_found',
      `no vault ${named}`,
      'name one of your vaults (GET /api/deployments/vaults), or leave vault out',
    )
  return row
}

/**
 * The owner's shared vault (the network's `vaults/create` and its default for new deployments): the owner's oldest
 * vault, made when the owner has none. Two managers making one at once each store theirs, then both answer the
 * oldest: the same vault from then on (the other stays, empty, in the owner's list).
 */
export async function sharedVault(ctx: ManagerContext, owner: string): Promise<VaultRow> {
  const oldest = async () =>
    (await ctx.store.vaults(owner)).reduce<VaultRow | undefined>(
      (best, vault) => (best === undefined || older(vault, best) ? vault : best),
      undefined,
    )
  const found = await oldest()
  if (found) return found
  const vault = generateKeypair()
  const row: VaultRow = {vault: vault.publicKey.toBase58(), owner, sealed: ctx.seal.seal(vault), created_at: ctx.now()}
  await ctx.store.addVault(row)
  return (await oldest()) ?? row
}

/** Whether `a` was made before `b`; ties by address, so every manager picks the same one. */
function older(a: VaultRow, b: VaultRow): boolean {
  return a.created_at < b.created_at || (a.created_at === b.created_at && a.vault < b.vault)
}

/** Every deployment of the owner paying (or that may pay) from the vault, page by page. */
export async function deploymentsOnVault(ctx: ManagerContext, owner: string, vault: string): Promise<DeploymentRow[]> {
  const all: DeploymentRow[] = []
  for (;;) {
    const page = await ctx.store.deployments({owner, vault, offset: all.length, limit: 100, order: 'asc'})
    all.push(...page.rows)
    // An empty page ends it too: a store whose total outruns its rows never loops.
    if (page.rows.length === 0 || all.length >= page.total) return all
  }
}

/**
 * The withdraw transaction of the owner's vault (`{transaction}`): `ask` null takes everything above its floor
 * (what the deployments paying from it need next, floor.ts), an ask exactly that; more than the vault may give is
 * 402, nothing signed.
 */
export async function withdrawVault(
  ctx: ManagerContext,
  owner: string,
  vault: string,
  ask: Cost | null,
): Promise<string> {
  const row = await ctx.store.vault(vault)
  if (!row || row.owner !== owner) throw notFound(`vault ${vault}`)
  const {floor, chain} = await readFloor(ctx.net, vault, await deploymentsOnVault(ctx, owner, vault))
  const amounts = withdrawAmounts(chain.balances, floor, ask, chain.costs.vaultRent)
  if ('refused' in amounts) throw withdrawRefused(vault, chain.balances, floor, amounts, chain.costs.vaultRent)
  return withdrawTransaction(ctx.net, ctx.seal.open(vault, row.sealed), new PublicKey(owner), chain.balances, amounts)
}

function withdrawRefused(vault: string, held: Cost, floor: Floor, refusal: WithdrawRefusal, vaultRent: bigint) {
  const keeps =
    floor.payers.length === 0
      ? 'nothing pays from it'
      : `it keeps ${floor.tokens} token base units and ${floor.lamports} lamports for the next listing or extension of every replica of ${floor.payers.join(', ')}`
  const may = `${refusal.available.tokens} token base units and ${refusal.available.lamports} lamports`
  if (refusal.refused === 'nothing')
    return wrongState(`vault ${vault} holds nothing it may give: ${keeps}`, 'stop its deployments to withdraw the rest')
  if (refusal.refused === 'under_rent')
    return badRequest(
      'withdraw_under_rent',
      `that withdraw would leave the vault ${vault} under its rent-exempt minimum of ${vaultRent} lamports`,
      'withdraw all of its SOL (leave SOL out) or leave it at least that much',
    )
  return new ApiError(
    402,
    'withdraw_exceeds_available',
    `the vault ${vault} holds ${held.tokens} token base units and ${held.lamports} lamports and may give ${may}: ${keeps}`,
    'ask at most that much, or leave SOL and NOS out to take all of it; nothing was moved',
  )
}
