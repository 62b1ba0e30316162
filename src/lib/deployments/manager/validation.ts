/** The checks of what a client sends: bodies, numbers and the rules of the network's API (item 8, server side). */
import {PublicKey} from '@solana/web3.js'

import type {Network} from '../../network.js'
import {SOL_DECIMALS} from '../../market/rpc/balances.js'
import {TOKEN_DECIMALS} from '../../market/networks.js'
import {badRequest} from '../../http/api-error.js'
import {MARKET_TYPES, MIN_QUEUE_TIMEOUT_S, type PlacementNeed} from '../../market/jobs/placement.js'
import {scheduleProblem} from '../schedule.js'
import type {QueuePlacement} from './move.js'
import {type AutoscalePolicy, DEFAULT_SCALE_DOWN_AFTER_S, policyProblem} from '../autoscale/policy.js'
import {STRATEGIES, type Strategy} from '../types.js'

/** The most replicas a deployment may ask for. */
export const MAX_REPLICAS = 100
/** The shortest timeout the network's API takes, in minutes. */
export const MIN_TIMEOUT_MINUTES = 1
/** The longest: 30 days. */
export const MAX_TIMEOUT_MINUTES = 30 * 24 * 60
const MAX_NAME = 100

export interface CreateRequest {
  name: string
  market: string | undefined
  replicas: number
  timeout: number
  strategy: Strategy
  job_definition: Record<string, unknown>
  confidential: boolean
  autostart: boolean
  time_scale: number
  /** SCHEDULED's cron; INFINITE's rotation lead (s) and startup timeout (minutes); null for the others. */
  schedule: string | null
  rotation_time: number | null
  startup_timeout: number | null
  /** One of the owner's vaults to pay from; the owner's shared vault when absent (and new_vault is not true). */
  vault: string | undefined
  /** A new vault of the deployment's own instead of the owner's shared one. */
  new_vault: boolean
  /** gpunet's queue timeout and the need its moves fit (move.ts), as stored; null when none was asked. */
  queue_placement: string | null
  /** gpunet's autoscaling policy (autoscale/policy.ts); null for a fixed replica count. */
  autoscale: AutoscalePolicy | null
  /** gpunet's budget, in token base units; null for none. */
  budget: number | null
}

/** INFINITE's shortest timeout, in minutes (the network's schema). */
export const INFINITE_MIN_TIMEOUT_MINUTES = 60
/** rotation_time must leave at least this much of a job's timeout before its replacement is listed, in seconds. */
export const ROTATION_MARGIN_S = 10 * 60

/** The body as an object of members, or 400. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('invalid_body', 'the body must be a JSON object')
  return body as Record<string, unknown>
}

/** replicas of a create: a whole number from 1 to 100. */
export function parseReplicas(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_REPLICAS)
    throw badRequest('invalid_replicas', `replicas must be a whole number from 1 to ${MAX_REPLICAS}`)
  return value
}

/** replicas of update-replica-count: a whole number from 0 (running with no job, nothing spent) to 100. */
export function parseReplicaCount(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_REPLICAS)
    throw badRequest(
      'invalid_replicas',
      `replicas must be a whole number from 0 to ${MAX_REPLICAS} (0 keeps the deployment running with no job)`,
    )
  return value
}

/** timeout: whole minutes, at least the network's minimum. */
export function parseTimeout(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw badRequest('invalid_timeout', 'timeout must be a whole number of minutes')
  if (value < MIN_TIMEOUT_MINUTES)
    throw badRequest(
      'timeout_too_short',
      `timeout must be at least ${MIN_TIMEOUT_MINUTES} minute (the network's minimum)`,
    )
  if (value > MAX_TIMEOUT_MINUTES)
    throw badRequest('timeout_too_long', `timeout must be at most ${MAX_TIMEOUT_MINUTES} minutes (30 days)`)
  return value
}

/** A base58 address, or 400 naming the member. */
export function parseAddressMember(value: unknown, member: string): string {
  if (typeof value === 'string') {
    try {
      return new PublicKey(value).toBase58()
    } catch {
      // refused below
    }
  }
  throw badRequest(`invalid_${member}`, `${member} must be a base58 Solana address`)
}

/** The create body (DeploymentCreateBody, plus gpunet's `time_scale`), every member checked. */
export function parseCreateBody(raw: unknown, network: Network): CreateRequest {
  const body = bodyObject(raw)
  const {name, market, strategy, job_definition: definition} = body
  if (!isName(name)) throw badRequest('invalid_name', `name must be 1 to ${MAX_NAME} printable characters`)
  if (typeof strategy !== 'string' || !(STRATEGIES as readonly string[]).includes(strategy))
    throw badRequest('invalid_strategy', `strategy must be one of ${STRATEGIES.join(', ')}`)
  if (typeof definition !== 'object' || definition === null || Array.isArray(definition))
    throw badRequest('invalid_job_definition', 'job_definition must be a job definition object')
  for (const member of ['confidential', 'autostart'])
    if (body[member] !== undefined && typeof body[member] !== 'boolean')
      throw badRequest(`invalid_${member}`, `${member} must be true or false`)
  if (body.new_vault !== undefined && typeof body.new_vault !== 'boolean')
    throw badRequest('invalid_new_vault', 'new_vault must be true or false')
  // The network's schema takes one of the two, never both (even new_vault: false beside a vault).
  if (body.new_vault !== undefined && body.vault !== undefined)
    throw badRequest(
      'invalid_vault',
      'give vault or new_vault, not both',
      "vault names one of your vaults; new_vault: true makes one of the deployment's own; neither uses your shared vault",
    )
  const timeout = parseTimeout(body.timeout)
  return {
    name,
    market: market === undefined ? undefined : parseAddressMember(market, 'market'),
    replicas: parseReplicas(body.replicas),
    timeout,
    strategy: strategy as Strategy,
    ...parseStrategyMembers(body, strategy as Strategy, timeout),
    job_definition: definition as Record<string, unknown>,
    confidential: body.confidential === true,
    autostart: body.autostart === true,
    time_scale: parseTimeScale(body.time_scale, network),
    vault: body.vault === undefined ? undefined : parseAddressMember(body.vault, 'vault'),
    new_vault: body.new_vault === true,
    queue_placement: parseQueuePlacement(body, timeout),
    autoscale: parseAutoscale(body.autoscale, strategy as Strategy) ?? null,
    budget: parseBudget(body.budget) ?? null,
  }
}

const MAX_NEED_ITEMS = 20

/**
 * gpunet's `queue_timeout` (whole seconds, from a minute to the job timeout) and the `need` its moves fit (the
 * placement need: gpuModels, minVram, maxPrice, marketType, images), as the row stores them; null when absent.
 */
export function parseQueuePlacement(body: Record<string, unknown>, timeoutMinutes: number): string | null {
  const {queue_timeout: seconds, need} = body
  if (seconds === undefined) {
    if (need !== undefined) throw badRequest('invalid_need', 'need is taken with queue_timeout only')
    return null
  }
  const longest = timeoutMinutes * 60
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < MIN_QUEUE_TIMEOUT_S || seconds > longest)
    throw badRequest(
      'invalid_queue_timeout',
      `queue_timeout must be whole seconds from ${MIN_QUEUE_TIMEOUT_S} to ${longest} (the job timeout)`,
    )
  const placement: QueuePlacement = {timeout_s: seconds, need: parseNeedMember(need), tried: []}
  return JSON.stringify(placement)
}

function parseNeedMember(value: unknown): PlacementNeed {
  const empty: PlacementNeed = {gpuModels: [], minVram: null, maxPrice: null, marketType: null, images: []}
  if (value === undefined) return empty
  const bad = (why: string) => badRequest('invalid_need', `need ${why}`)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('must be an object')
  const v = value as Record<string, unknown>
  const names = (member: string) => {
    const list = v[member] ?? []
    if (!Array.isArray(list) || list.length > MAX_NEED_ITEMS || !list.every((x) => isName(x)))
      throw bad(`${member} must be a list of at most ${MAX_NEED_ITEMS} names`)
    return list as string[]
  }
  const positive = (member: string) => {
    const n = v[member] ?? null
    if (n !== null && (typeof n !== 'number' || !(n > 0) || !Number.isFinite(n)))
      throw bad(`${member} must be a positive number or null`)
    return n as number | null
  }
  const type = v.marketType ?? null
  if (type !== null && !(MARKET_TYPES as readonly unknown[]).includes(type))
    throw bad(`marketType must be one of ${MARKET_TYPES.join(', ')} or null`)
  return {
    gpuModels: names('gpuModels'),
    minVram: positive('minVram'),
    maxPrice: positive('maxPrice'),
    marketType: type as PlacementNeed['marketType'],
    images: names('images'),
  }
}

/**
 * gpunet's `autoscale` member (of a create, or of update-autoscale): a policy, every member checked
 * (policyProblem: 400), its scale_down_after 5 minutes when absent; null ends one; undefined when absent.
 */
export function parseAutoscale(value: unknown, strategy: Strategy): AutoscalePolicy | null | undefined {
  if (value === undefined || value === null) return value
  const given = bodyObject(value)
  const policy: Record<string, unknown> = {
    ...given,
    scale_down_after: given.scale_down_after ?? DEFAULT_SCALE_DOWN_AFTER_S,
  }
  const problem = policyProblem(policy, strategy, (member) => `autoscale.${member}`)
  if (problem) throw badRequest(problem.code, `${problem.message}; nothing was changed`, problem.hint)
  return {
    min_replicas: policy.min_replicas as number,
    max_replicas: policy.max_replicas as number,
    target_concurrency: policy.target_concurrency as number,
    scale_down_after: policy.scale_down_after as number,
  }
}

/** gpunet's `budget` member: tokens (at most their decimals) as base units, above 0; null ends one; undefined when absent. */
export function parseBudget(value: unknown): number | null | undefined {
  if (value === undefined || value === null) return value
  const units = baseUnits(value, 'budget', TOKEN_DECIMALS, 'give the most tokens the deployment may spend, e.g. 25')
  if (units === 0n) throw badRequest('invalid_budget', 'budget must be more than 0 tokens; nothing was changed')
  return Number(units)
}

/** What `duplicate` takes (the network's): each member optional, the source's own when absent. */
export interface DuplicateRequest {
  name: string | undefined
  market: string | undefined
  autostart: boolean
}

/** The duplicate body (none, or `{name?, market?, autostart?}`), every member checked. */
export function parseDuplicateBody(raw: unknown): DuplicateRequest {
  const body = raw === undefined ? {} : bodyObject(raw)
  const {name, market, autostart} = body
  if (name !== undefined && !isName(name))
    throw badRequest('invalid_name', `name must be 1 to ${MAX_NAME} printable characters; nothing was created`)
  if (autostart !== undefined && typeof autostart !== 'boolean')
    throw badRequest('invalid_autostart', 'autostart must be true or false; nothing was created')
  return {
    name: name as string | undefined,
    market: market === undefined ? undefined : parseAddressMember(market, 'market'),
    autostart: autostart === true,
  }
}

/** A copy's name: the source's with " (copy)", the source's cut short so the whole stays within the limit. */
export function copyName(source: string): string {
  const suffix = ' (copy)'
  return `${source.slice(0, MAX_NAME - suffix.length).trimEnd()}${suffix}`
}

/** SCHEDULED's schedule and INFINITE's rotation_time and startup_timeout, each only with its strategy. */
export function parseStrategyMembers(
  body: Record<string, unknown>,
  strategy: Strategy,
  timeout: number,
): Pick<CreateRequest, 'schedule' | 'rotation_time' | 'startup_timeout'> {
  const only = (member: string, owner: Strategy) => {
    if (body[member] !== undefined && strategy !== owner)
      throw badRequest(`invalid_${member}`, `${member} is for the ${owner} strategy only`)
  }
  only('schedule', 'SCHEDULED')
  only('rotation_time', 'INFINITE')
  only('startup_timeout', 'INFINITE')
  if (strategy === 'SCHEDULED') {
    const problem = scheduleProblem(body.schedule)
    if (problem) throw badRequest('invalid_schedule', problem)
    return {schedule: (body.schedule as string).trim(), rotation_time: null, startup_timeout: null}
  }
  if (strategy !== 'INFINITE') return {schedule: null, rotation_time: null, startup_timeout: null}
  if (timeout < INFINITE_MIN_TIMEOUT_MINUTES)
    throw badRequest(
      'timeout_too_short',
      `an INFINITE deployment's timeout must be at least ${INFINITE_MIN_TIMEOUT_MINUTES} minutes`,
    )
  const rotation = body.rotation_time
  const longest = timeout * 60 - ROTATION_MARGIN_S
  if (
    rotation !== undefined &&
    (typeof rotation !== 'number' || !Number.isInteger(rotation) || rotation < 1 || rotation > longest)
  )
    throw badRequest(
      'invalid_rotation_time',
      `rotation_time must be whole seconds from 1 to ${longest} (at least 10 minutes less than the timeout)`,
    )
  const startup = body.startup_timeout
  if (
    startup !== undefined &&
    (typeof startup !== 'number' || !Number.isInteger(startup) || startup < 1 || startup >= timeout)
  )
    throw badRequest(
      'invalid_startup_timeout',
      `startup_timeout must be whole minutes from 1 to ${timeout - 1} (less than the timeout)`,
    )
  return {
    schedule: null,
    rotation_time: (rotation as number | undefined) ?? null,
    startup_timeout: (startup as number | undefined) ?? null,
  }
}

/** time_scale: a number >= 1, on the localnet only (elsewhere 400); 1 when absent. */
export function parseTimeScale(value: unknown, network: Network): number {
  if (value === undefined) return 1
  if (network !== 'localnet')
    throw badRequest(
      'time_scale_localnet_only',
      `time_scale is for the localnet only, not ${network}: durations there are real`,
    )
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1 || value > 10_000)
    throw badRequest('invalid_time_scale', 'time_scale must be a number from 1 to 10000')
  return value
}

function isName(name: unknown): name is string {
  return typeof name === 'string' && name.trim() !== '' && name.length <= MAX_NAME && !hasControlCharacter(name)
}

function hasControlCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0)!
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

/**
 * The withdraw body (the network's `{SOL?, NOS?}`, in SOL and tokens): null when both are absent (everything the
 * vault may give), else the amounts in base units, an absent one 0.
 */
export function parseWithdrawBody(body: Record<string, unknown>): {lamports: bigint; tokens: bigint} | null {
  if (body.SOL === undefined && body.NOS === undefined) return null
  return {lamports: baseUnits(body.SOL, 'SOL', SOL_DECIMALS), tokens: baseUnits(body.NOS, 'NOS', TOKEN_DECIMALS)}
}

/** A non-negative number of SOL or tokens with at most their decimals, in base units; absent is 0. */
function baseUnits(
  value: unknown,
  member: string,
  decimals: number,
  hint = 'leave SOL and NOS out to withdraw everything the vault may give',
): bigint {
  if (value === undefined) return 0n
  const refused = () =>
    badRequest(`invalid_${member}`, `${member} must be a number from 0 with at most ${decimals} decimals`, hint)
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 2 ** 53 / 10 ** decimals)
    throw refused()
  // Beyond 2^53 base units a JSON number has lost its last digits (the bound above).
  const fixed = value.toFixed(decimals)
  // More decimals than the unit has would be rounded: refused rather than moved in another amount than asked.
  if (Number(fixed) !== value) throw refused()
  const [whole, fraction] = fixed.split('.') as [string, string]
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction)
}
