/**
 * What the API's routes do to a deployment: create, duplicate, start, stop, archive, delete, change (a vault's:
 * vault-operations.ts).
 */
import {randomBytes} from 'node:crypto'

import {PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import type {MarketAccount} from '../../market/codec/accounts.js'
import {readMarket} from '../../market/jobs/jobs.js'
import {generateKeypair} from '../../keys/wallet.js'
import {ApiError, badRequest, notFound, wrongState} from '../../http/api-error.js'
import type {ManagerContext} from '../context.js'
import {covers, readFloor} from '../paying/deposit.js'
import {listedDefinition, uploadListed} from './listed-definition.js'
import {beginMove, queuePlacementOf} from './move.js'
import {isOver, jobTimeoutSeconds} from '../strategies/index.js'
import {chooseVault, deploymentsOnVault} from './vault-operations.js'
import {copyName, type CreateRequest, type DuplicateRequest} from './validation.js'
import {type AutoscalePolicy, clampReplicas, policyColumns, policyOf} from '../autoscale/policy.js'
import type {DeploymentRow, DeploymentStatus} from '../types.js'

/** The owner's deployment, or 404 (another owner's deployment is not found either). */
export async function ownDeployment(ctx: ManagerContext, owner: string, id: string): Promise<DeploymentRow> {
  const deployment = await ctx.store.deployment(id)
  if (!deployment || deployment.owner !== owner) throw notFound(`deployment ${id}`)
  return deployment
}

/** Checks the definition as `job post` does (nothing is paid for a refused one), uploads it and stores the deployment. */
export async function createDeployment(
  ctx: ManagerContext,
  owner: string,
  request: CreateRequest,
): Promise<DeploymentRow> {
  // The id first: the definition its jobs are listed with carries it (listed-definition.ts).
  const id = bs58.encode(randomBytes(32))
  const listed = await listedDefinition(ctx, id, request.job_definition, 'nothing was created or paid')
  const market = request.market ?? ctx.net.defaultMarket.toBase58()
  const {jobTimeout, jobPrice: price} = await checkMarket(ctx, market)
  const queueTimeout = request.queue_placement && queuePlacementOf(request)!.timeout_s
  if (queueTimeout && queueTimeout > Number(jobTimeout))
    throw badRequest(
      'invalid_queue_timeout',
      `queue_timeout ${queueTimeout} s is longer than the market's job timeout (${jobTimeout} s)`,
    )
  checkBudgetCoversListing(request.budget, price, request)
  // The owner's shared vault unless new_vault asks for one of its own or vault names one (the network's rule).
  const chosen = request.new_vault ? null : await chooseVault(ctx, owner, request.vault)
  await uploadListed(ctx, listed)
  const vault = chosen ? null : generateKeypair()
  const now = ctx.now()
  const deployment: DeploymentRow = {
    id,
    name: request.name,
    owner,
    vault: chosen ? chosen.vault : vault!.publicKey.toBase58(),
    market,
    status: 'DRAFT',
    replicas: request.autoscale ? clampReplicas(request.autoscale, request.replicas) : request.replicas,
    timeout: request.timeout,
    strategy: request.strategy,
    time_scale: request.time_scale,
    confidential: request.confidential,
    active_revision: 1,
    started_at: null,
    schedule: request.schedule,
    rotation_time: request.rotation_time,
    startup_timeout: request.startup_timeout,
    throttle_rounds: 0,
    queue_placement: request.queue_placement,
    ...policyColumns(request.autoscale),
    budget: request.budget,
    created_at: now,
    updated_at: now,
  }
  await ctx.store.createDeployment(
    deployment,
    {
      deployment: deployment.id,
      revision: 1,
      ipfs_definition_hash: listed.cid,
      job_definition: listed.text,
      created_at: now,
    },
    vault && {vault: deployment.vault, owner, sealed: ctx.seal.seal(vault), created_at: now},
  )
  await event(ctx, deployment.id, 'DEPLOYMENT_CREATED', `deployment created, vault ${deployment.vault}`)
  return deployment
}

/**
 * Duplicates a deployment as the network's `duplicate` does: a new DRAFT named `name` (else "<source name> (copy)"),
 * on the source's market unless `market` is given, with its vault, replicas, timeout, strategy (and its schedule or
 * rotation), confidentiality and time_scale, and its active revision's definition as its first revision (carrying
 * the copy's own deployment_id). Checked and stored as a create is (400, nothing created); the source is untouched.
 */
export async function duplicateDeployment(
  ctx: ManagerContext,
  source: DeploymentRow,
  request: DuplicateRequest,
): Promise<DeploymentRow> {
  const revision = await ctx.store.revision(source.id, source.active_revision)
  if (!revision) throw notFound(`revision ${source.active_revision} of deployment ${source.id}`)
  return createDeployment(ctx, source.owner, {
    name: request.name ?? copyName(source.name),
    market: request.market ?? source.market,
    replicas: source.replicas,
    timeout: source.timeout,
    strategy: source.strategy,
    job_definition: givenDefinition(revision.job_definition),
    confidential: source.confidential,
    autostart: request.autostart,
    time_scale: source.time_scale,
    schedule: source.schedule ?? null,
    rotation_time: source.rotation_time ?? null,
    startup_timeout: source.startup_timeout ?? null,
    vault: source.vault,
    new_vault: false,
    // The copy's queue timeout starts afresh: no market tried yet.
    queue_placement: freshQueuePlacement(source),
    autoscale: policyOf(source),
    budget: source.budget ?? null,
  })
}

function freshQueuePlacement(source: DeploymentRow): string | null {
  const placement = queuePlacementOf(source)
  return placement && JSON.stringify({timeout_s: placement.timeout_s, need: placement.need, tried: []})
}

/**
 * A revision's definition as a create takes it: without the two members the manager added to list it
 * (listed-definition.ts), which the check of a definition refuses and the copy's listing adds again, its own.
 */
function givenDefinition(text: string): Record<string, unknown> {
  const definition = JSON.parse(text) as Record<string, unknown>
  delete definition.deployment_id
  if (typeof definition.meta === 'object' && definition.meta !== null) {
    const meta = definition.meta as Record<string, unknown>
    delete meta.trigger
    if (Object.keys(meta).length === 0) delete definition.meta
  }
  return definition
}

const START_FROM: readonly DeploymentStatus[] = ['DRAFT', 'STOPPED', 'ERROR', 'INSUFFICIENT_FUNDS']
const STOP_FROM: readonly DeploymentStatus[] = ['STARTING', 'RUNNING', 'ERROR', 'INSUFFICIENT_FUNDS']

/**
 * Starts a deployment: STARTING, or INSUFFICIENT_FUNDS (402) when its vault does not hold the next listing of every
 * replica (price x timeout x replicas in tokens; rent and fees in SOL) on top of what the other deployments paying
 * from the same vault need (a shared vault pays for all of them: floor.ts).
 */
export async function startDeployment(ctx: ManagerContext, deployment: DeploymentRow): Promise<DeploymentRow> {
  if (!START_FROM.includes(deployment.status))
    throw wrongState(`deployment ${deployment.id} is ${deployment.status}: only a ${START_FROM.join(', ')} one starts`)
  const now = ctx.now()
  const others = (await deploymentsOnVault(ctx, deployment.owner, deployment.vault)).filter(
    (d) => d.id !== deployment.id,
  )
  const started: DeploymentRow = {...deployment, status: 'STARTING', started_at: now}
  const {floor, chain} = await readFloor(ctx.net, deployment.vault, [started, ...others])
  if (!covers(chain.balances, floor)) {
    // Not over a start that went through meanwhile (the vault was funded between the two reads).
    const moved = await ctx.store.moveDeployment(
      deployment.id,
      [deployment.status],
      {status: 'INSUFFICIENT_FUNDS', started_at: null},
      now,
    )
    if (moved)
      await event(ctx, deployment.id, 'DEPLOYMENT_INSUFFICIENT_FUNDS', 'the vault does not hold the deposit to start')
    const sharers = floor.payers.filter((id) => id !== deployment.id)
    const shared =
      sharers.length === 0
        ? ''
        : `, with what the vault keeps for the ${sharers.length} other running deployment${sharers.length === 1 ? '' : 's'} it pays for (${sharers.join(', ')}): a shared vault must cover all of them`
    throw new ApiError(
      402,
      'insufficient_funds',
      `the vault ${deployment.vault} holds ${chain.balances.tokens} token base units and ${chain.balances.lamports} lamports; ` +
        `starting needs ${floor.tokens} token base units (price x timeout x ${deployment.replicas} replicas) and ${floor.lamports} lamports (rent and fees)${shared}`,
      'fund the vault (gpunet deployment fund ID), then start again',
    )
  }
  // Only from the status read above: of starts sent at once, one moves it and records the event; the others find
  // it started, as a start sent after it would.
  const moved = await ctx.store.moveDeployment(
    deployment.id,
    [deployment.status],
    {status: 'STARTING', started_at: now, throttle_rounds: 0},
    now,
  )
  if (!moved) {
    const current = await ctx.store.deployment(deployment.id)
    if (!current) throw notFound(`deployment ${deployment.id}`)
    throw wrongState(`deployment ${deployment.id} is ${current.status}: only a ${START_FROM.join(', ')} one starts`)
  }
  await event(ctx, deployment.id, 'DEPLOYMENT_STARTED', 'deployment starting')
  return moved
}

/** Stops a deployment: STOPPING, until the worker has stopped every job (then STOPPED). */
export async function stopDeployment(ctx: ManagerContext, deployment: DeploymentRow): Promise<DeploymentRow> {
  if (!STOP_FROM.includes(deployment.status))
    throw wrongState(`deployment ${deployment.id} is ${deployment.status}: there is nothing to stop`)
  const stopped = await ctx.store.updateDeployment(deployment.id, {status: 'STOPPING'}, ctx.now())
  await event(ctx, deployment.id, 'DEPLOYMENT_STOPPING', 'deployment stopping')
  return stopped
}

/** Archives a stopped (or never started) deployment. */
export async function archiveDeployment(ctx: ManagerContext, deployment: DeploymentRow): Promise<DeploymentRow> {
  if (deployment.status !== 'STOPPED' && deployment.status !== 'DRAFT')
    throw wrongState(`deployment ${deployment.id} is ${deployment.status}: stop it before archiving it`)
  return ctx.store.updateDeployment(deployment.id, {status: 'ARCHIVED'}, ctx.now())
}

/** Deletes a deployment that runs nothing; its vault stays (it may hold funds: withdraw them). */
export async function deleteDeployment(ctx: ManagerContext, deployment: DeploymentRow): Promise<void> {
  if (!['STOPPED', 'DRAFT', 'ARCHIVED'].includes(deployment.status))
    throw wrongState(`deployment ${deployment.id} is ${deployment.status}: stop it before deleting it`)
  await ctx.store.deleteDeployment(deployment.id)
}

/**
 * Changes the replica count (0 to 100) by hand, which ends an autoscaling policy (the count is the owner's now).
 */
export async function updateReplicas(ctx: ManagerContext, deployment: DeploymentRow, replicas: number) {
  if (deployment.status === 'ARCHIVED') throw wrongState(`deployment ${deployment.id} is archived`)
  const ended = policyOf(deployment) !== null
  const changed = await setReplicas(ctx, deployment, replicas, ended ? policyColumns(null) : {})
  if (ended)
    await event(ctx, deployment.id, 'AUTOSCALE_OFF', `autoscaling ended: the replicas were set to ${replicas} by hand`)
  return changed
}

/**
 * Sets the replica count (by hand or by the autoscaler); the strategy lists the shortfall or stops the excess. At 0
 * a started deployment stays as it is (RUNNING) with no job; from 0 it begins a new run (started_at), as a start
 * would: what the jobs of the run before did (SIMPLE's jobs ended on their own, INFINITE's rapid completions)
 * counts no more.
 */
export async function setReplicas(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  replicas: number,
  also: Partial<DeploymentRow> = {},
): Promise<DeploymentRow> {
  const now = ctx.now()
  return ctx.store.updateDeployment(deployment.id, {...also, ...replicasChange(deployment, replicas, now)}, now)
}

/**
 * The columns a new replica count changes: the count, and from 0 a new run (started_at now, the throttle's rounds
 * reset) so that the jobs of the run before are not counted as this one's.
 */
export function replicasChange(
  deployment: Pick<DeploymentRow, 'replicas' | 'started_at'>,
  replicas: number,
  now: number,
): Partial<DeploymentRow> {
  const fromZero = deployment.replicas === 0 && replicas > 0 && deployment.started_at !== null
  return fromZero ? {replicas, started_at: now, throttle_rounds: 0} : {replicas}
}

/**
 * Sets, changes or ends (null) a deployment's autoscaling policy, and its budget when given (null ends it); the
 * replicas are brought within the new bounds at once, the rest is the tick's (autoscaler.ts). Checked before
 * anything is stored: a policy on SIMPLE or SCHEDULED, or a budget under one listing's deposit, is 400.
 */
export async function updateAutoscale(
  ctx: ManagerContext,
  deployment: DeploymentRow,
  policy: AutoscalePolicy | null,
  budget: number | null | undefined,
): Promise<DeploymentRow> {
  if (deployment.status === 'ARCHIVED') throw wrongState(`deployment ${deployment.id} is archived`)
  if (budget !== undefined && budget !== null) {
    const market = await readMarket(ctx.net.connection, ctx.net.programId, new PublicKey(deployment.market))
    checkBudgetCoversListing(budget, market.jobPrice, deployment)
  }
  const also: Partial<DeploymentRow> = {...policyColumns(policy), ...(budget === undefined ? {} : {budget})}
  const replicas = policy ? clampReplicas(policy, deployment.replicas) : deployment.replicas
  const changed = await setReplicas(ctx, deployment, replicas, also)
  const what = policy
    ? `autoscaling on: ${policy.min_replicas} to ${policy.max_replicas} replicas, ${policy.target_concurrency} in flight per replica, down after ${policy.scale_down_after} s`
    : 'autoscaling off'
  const spend = budget === undefined ? '' : budget === null ? '; no budget' : `; budget ${budget} token base units`
  await event(ctx, deployment.id, policy ? 'AUTOSCALE_ON' : 'AUTOSCALE_OFF', `${what}${spend}`)
  return changed
}

/** A budget must pay for one listing at least (price x the job's timeout): else nothing could ever run. */
function checkBudgetCoversListing(
  budget: number | null,
  pricePerSecond: bigint,
  deployment: Pick<DeploymentRow, 'timeout' | 'time_scale'>,
): void {
  if (budget === null) return
  const deposit = pricePerSecond * BigInt(jobTimeoutSeconds(deployment))
  if (BigInt(budget) < deposit)
    throw badRequest(
      'budget_below_deposit',
      `the budget (${budget} token base units) is below one listing's deposit (${deposit}: the market's price x the job's timeout); nothing was changed`,
      'give a budget of at least one deposit, or a shorter --timeout',
    )
}

/** Changes a SCHEDULED deployment's cron; the listing waiting for the old one's next time is dropped for the new one's. */
export async function updateSchedule(ctx: ManagerContext, deployment: DeploymentRow, schedule: string) {
  if (deployment.status === 'ARCHIVED') throw wrongState(`deployment ${deployment.id} is archived`)
  const now = ctx.now()
  for (const task of await ctx.store.tasks(deployment.id, {open: true}))
    if (task.task === 'LIST' && task.status === 'PENDING' && task.due_at > now)
      await ctx.store.updateTask(task.id, {status: 'DONE', error: 'cancelled: the schedule changed'}, now)
  return ctx.store.updateDeployment(deployment.id, {schedule}, now)
}

/**
 * Changes the timeout (minutes) of the jobs listed and extensions made from now on; a raised one also extends the
 * running jobs of a RUNNING INFINITE or SIMPLE-EXTEND deployment to it (strategies/extend-rule.ts, at the next pass).
 */
export async function updateTimeout(ctx: ManagerContext, deployment: DeploymentRow, timeout: number) {
  if (deployment.status === 'ARCHIVED') throw wrongState(`deployment ${deployment.id} is archived`)
  return ctx.store.updateDeployment(deployment.id, {timeout}, ctx.now())
}

/** The market account of `market`, or 400 unless it is a market of the manager's network. */
async function checkMarket(ctx: ManagerContext, market: string): Promise<MarketAccount> {
  try {
    return await readMarket(ctx.net.connection, ctx.net.programId, new PublicKey(market))
  } catch (error) {
    if ((error as {exitCode?: number}).exitCode === 7)
      throw badRequest('unknown_market', `${market} is not a market of ${ctx.network}`)
    throw error
  }
}

/**
 * Moves a deployment to another market (the network's `update-market`). A RUNNING one moves make-before-break
 * (move.ts): its replicas listed on the new market, the old drained and stopped once the new are ready, or the
 * move rolled back. A DRAFT or STOPPED one runs nothing: its market is changed at once. A deployment starting,
 * stopping, failed or short of funds, one whose rollout or move is under way, and an archived one are refused (409).
 */
export async function moveDeployment(ctx: ManagerContext, deployment: DeploymentRow, market: string) {
  const {id, status} = deployment
  if (market === deployment.market)
    throw badRequest('same_market', `deployment ${id} is on the market ${market} already`)
  if (deployment.move_from)
    throw wrongState(
      `deployment ${id} is moving from ${deployment.move_from} to ${deployment.market}`,
      `wait for the move to end: gpunet deployment events ${id} --follow`,
    )
  if (status !== 'RUNNING' && status !== 'DRAFT' && status !== 'STOPPED')
    throw wrongState(
      `deployment ${id} is ${status}: only a RUNNING deployment moves (a DRAFT or STOPPED one changes market at once)`,
      status === 'ARCHIVED' ? 'an archived deployment runs nothing again: duplicate it with --market' : undefined,
    )
  await checkMarket(ctx, market)
  if (status !== 'RUNNING') return ctx.store.updateDeployment(id, {market}, ctx.now())
  const rolling = (await ctx.store.jobs(id)).some(
    (j) => !isOver(j.state) && !j.stop_requested && j.revision !== deployment.active_revision,
  )
  if (rolling)
    throw wrongState(
      `deployment ${id} is rolling out revision ${deployment.active_revision}`,
      `move it once the rollout is over: gpunet deployment events ${id} --follow`,
    )
  // The new replicas are listed while the old still hold their deposits: the vault pays for them as for a start.
  const others = (await deploymentsOnVault(ctx, deployment.owner, deployment.vault)).filter((d) => d.id !== id)
  const moved: DeploymentRow = {...deployment, market, status: 'STARTING', started_at: ctx.now()}
  const {floor, chain} = await readFloor(ctx.net, deployment.vault, [moved, ...others])
  if (!covers(chain.balances, floor))
    throw new ApiError(
      402,
      'insufficient_funds',
      `the vault ${deployment.vault} holds ${chain.balances.tokens} token base units and ${chain.balances.lamports} lamports; ` +
        `moving lists ${deployment.replicas} new replicas on ${market} beside the old ones, which needs ${floor.tokens} token base units and ${floor.lamports} lamports`,
      'fund the vault (gpunet deployment fund ID), then move again; nothing was changed',
    )
  return beginMove(ctx, deployment, market, 'asked (update-market)')
}

async function event(ctx: ManagerContext, deployment: string, type: string, message: string) {
  await ctx.store.addEvent({deployment, category: 'Deployment', type, message, tx: null}, ctx.now())
}
