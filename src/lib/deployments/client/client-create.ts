/**
 * What `deployment create` checks before it sends anything: the replica count, the timeout (the network counts
 * minutes), the time scale, and the definition, validated and put in the network's form exactly as `job post`
 * does, so an invalid one is exit 3 with nothing created or paid.
 */
import {basename, extname} from 'node:path'

import {PublicKey} from '@solana/web3.js'

import {loadPostableDefinition} from '../../definition/upload.js'
import type {LocatedIssue} from '../../definition/check.js'
import {ExitCode, GpunetError} from '../../errors.js'
import {durationMs} from '../../text/durations.js'
import {MIN_QUEUE_TIMEOUT_S} from '../../market/jobs/placement.js'
import type {Network} from '../../network.js'
import type {CreateBody} from './client.js'
import {scheduleProblem} from '../schedule.js'

import {MAX_REPLICAS} from './client.js'

/** The network's API takes 1 to 100 replicas at create (0 to 100 at a scale: client.ts' checkScaleReplicas). */
export {MAX_REPLICAS}

/** The network's strategies, as `--strategy` takes them. */
export const CREATE_STRATEGIES = ['SIMPLE', 'SIMPLE-EXTEND', 'SCHEDULED', 'INFINITE'] as const

/** INFINITE's shortest timeout (minutes), and the part of it rotation_time must leave (seconds): the network's. */
const INFINITE_MIN_TIMEOUT_MINUTES = 60
const ROTATION_MARGIN_S = 10 * 60

/** A replica count of 1 to MAX_REPLICAS, or exit 2. */
export function checkReplicas(replicas: number): number {
  if (!Number.isSafeInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS) {
    throw new GpunetError(
      'invalid_replicas',
      `--replicas ${replicas} is out of range: a deployment runs 1 to ${MAX_REPLICAS} replicas`,
      {
        exitCode: ExitCode.USAGE,
        hint: `give --replicas between 1 and ${MAX_REPLICAS}; nothing was created`,
      },
    )
  }
  return replicas
}

/** A warning of a command's `--json` document (`warnings[]`), said on stderr too. */
export interface CommandWarning {
  code: string
  message: string
  hint?: string
}

/**
 * The warning when a localnet runs fewer nodes than a deployment keeps replicas: each node runs one job at a time,
 * so the others would stay QUEUED for good (the localnet's nodes serve other jobs too: this counts them all).
 */
export function replicasBeyondNodes(replicas: number, nodes: number | null): CommandWarning | null {
  if (nodes === null || replicas <= nodes) return null
  const waiting = replicas - nodes
  const runs = nodes === 0 ? 'runs no node' : `runs ${nodes} node${nodes === 1 ? '' : 's'}, one job each`
  return {
    code: 'replicas_beyond_nodes',
    message: `${replicas} replicas, but the localnet ${runs}: ${waiting} of them would stay QUEUED`,
    hint: `run as many nodes: gpunet localnet stop && gpunet localnet start --detach --nodes ${replicas}`,
  }
}

/** A `--timeout` such as `2h`, `90m` or `1h30m` in whole minutes (the network's unit), at least one; else exit 2. */
export function timeoutMinutes(text: string): number {
  const ms = durationMs(text)
  const bad = (why: string) =>
    new GpunetError('invalid_timeout', `--timeout ${JSON.stringify(text)} ${why}`, {
      exitCode: ExitCode.USAGE,
      hint: 'give a duration in whole minutes such as 90m, 2h or 1h30m; nothing was created',
    })
  if (ms === null) throw bad('is not a duration')
  if (ms % 60_000 !== 0)
    throw bad('is not a whole number of minutes: the network counts a deployment’s timeout in minutes')
  if (ms < 60_000) throw bad('is under a minute')
  return ms / 60_000
}

export interface CreateInput {
  file: string
  network: Network
  /**
   * The market's address, asked for once every local check passed (it may start the localnet), given the definition
   * in the network's form (placement reads its `required_vram`).
   */
  market: (document: Record<string, unknown>) => Promise<string>
  replicas: number
  strategy: string
  timeout: string
  name?: string
  timeScale?: number
  /** SCHEDULED's cron. */
  schedule?: string
  /** INFINITE's `--rotation-time` and `--startup-timeout` as given (durations such as 20m). */
  rotationTime?: string
  startupTimeout?: string
  /** `--vault`: `new` (a vault of its own) or one of the owner's vaults; absent, the owner's shared vault. */
  vault?: string
  /** `--queue-timeout` as given (a duration such as 10m): gpunet's manager moves a replica waiting QUEUED past it. */
  queueTimeout?: string
}

/** `--queue-timeout` in whole seconds, from a minute to the job timeout (`timeout` minutes); else exit 2. */
export function queueTimeoutSeconds(text: string, timeout: number): number {
  const ms = durationMs(text)
  const longest = timeout * 60
  if (ms === null || ms % 1000 !== 0 || ms / 1000 < MIN_QUEUE_TIMEOUT_S || ms / 1000 > longest)
    throw new GpunetError(
      'invalid_queue_timeout',
      `--queue-timeout ${JSON.stringify(text)} must be whole seconds from ${MIN_QUEUE_TIMEOUT_S} s to ${longest} s (the job timeout)`,
      {exitCode: ExitCode.USAGE, hint: 'give a duration such as 5m; nothing was created'},
    )
  return ms / 1000
}

/**
 * The strategy's own members, checked: SCHEDULED needs a 5-field cron (exit 3 when it is not one); INFINITE needs a
 * timeout of at least 60 minutes and takes a rotation time (at least 10 minutes less) and a startup timeout (exit 2).
 */
export function strategyMembers(
  input: Pick<CreateInput, 'strategy' | 'schedule' | 'rotationTime' | 'startupTimeout'>,
  timeout: number,
): Pick<CreateBody, 'schedule' | 'rotation_time' | 'startup_timeout'> {
  const usage = (code: string, message: string, hint: string) =>
    new GpunetError(code, message, {exitCode: ExitCode.USAGE, hint: `${hint}; nothing was created`})
  const only = (given: unknown, flag: string, strategy: string) => {
    if (given !== undefined && input.strategy !== strategy)
      throw usage(
        `invalid_${flag.replace('-', '_')}`,
        `--${flag} is for --strategy ${strategy} only`,
        `leave out --${flag}`,
      )
  }
  only(input.schedule, 'schedule', 'SCHEDULED')
  only(input.rotationTime, 'rotation-time', 'INFINITE')
  only(input.startupTimeout, 'startup-timeout', 'INFINITE')
  if (input.strategy === 'SCHEDULED') {
    if (input.schedule === undefined)
      throw usage(
        'schedule_missing',
        '--strategy SCHEDULED needs --schedule',
        "give a 5-field cron such as --schedule '0 * * * *'",
      )
    const problem = scheduleProblem(input.schedule)
    if (problem)
      throw new GpunetError('invalid_schedule', problem, {
        exitCode: ExitCode.INVALID_INPUT,
        hint: "five fields, minute hour day-of-month month day-of-week (UTC), e.g. '*/15 * * * *'; nothing was created",
      })
    return {schedule: input.schedule.trim()}
  }
  if (input.strategy !== 'INFINITE') return {}
  if (timeout < INFINITE_MIN_TIMEOUT_MINUTES)
    throw usage(
      'timeout_too_short',
      `--strategy INFINITE needs a --timeout of at least ${INFINITE_MIN_TIMEOUT_MINUTES} minutes (the network's rule)`,
      'give --timeout 1h or more',
    )
  const members: Pick<CreateBody, 'rotation_time' | 'startup_timeout'> = {}
  if (input.rotationTime !== undefined) {
    const ms = durationMs(input.rotationTime)
    const longest = timeout * 60 - ROTATION_MARGIN_S
    if (ms === null || ms % 1000 !== 0 || ms < 1000 || ms / 1000 > longest)
      throw usage(
        'invalid_rotation_time',
        `--rotation-time ${JSON.stringify(input.rotationTime)} must be whole seconds from 1 s to ${longest} s (at least 10 minutes less than the timeout)`,
        'give a duration such as 20m',
      )
    members.rotation_time = ms / 1000
  }
  if (input.startupTimeout !== undefined) {
    const ms = durationMs(input.startupTimeout)
    if (ms === null || ms % 60_000 !== 0 || ms < 60_000 || ms / 60_000 >= timeout)
      throw usage(
        'invalid_startup_timeout',
        `--startup-timeout ${JSON.stringify(input.startupTimeout)} must be whole minutes, at least 1, less than the timeout`,
        'give a duration such as 10m',
      )
    members.startup_timeout = ms / 60_000
  }
  return members
}

/** `--vault` as the body's member: `new_vault: true` for `new`, `vault` for an address (else exit 2), none when absent. */
export function vaultMember(vault: string | undefined): {vault?: string; new_vault?: true} {
  if (vault === undefined) return {}
  if (vault === 'new') return {new_vault: true}
  try {
    return {vault: new PublicKey(vault).toBase58()}
  } catch {
    throw new GpunetError('invalid_vault', `--vault ${JSON.stringify(vault)} is neither "new" nor a vault's address`, {
      exitCode: ExitCode.USAGE,
      hint: 'leave --vault out for your shared vault, give --vault new for one of its own, or a vault address of yours',
    })
  }
}

/**
 * The create body of a definition file, every local check passed (usage: exit 2; definition: exit 3), and the
 * definition's warnings for the caller to show.
 */
export async function createBody(input: CreateInput): Promise<{body: CreateBody; warnings: LocatedIssue[]}> {
  const replicas = checkReplicas(input.replicas)
  const timeout = timeoutMinutes(input.timeout)
  const members = strategyMembers(input, timeout)
  const vault = vaultMember(input.vault)
  const queueTimeout = input.queueTimeout === undefined ? undefined : queueTimeoutSeconds(input.queueTimeout, timeout)
  if (input.timeScale !== undefined && input.network !== 'localnet') {
    throw new GpunetError('time_scale_localnet_only', '--time-scale is for the localnet only', {
      exitCode: ExitCode.USAGE,
      hint: "on devnet and mainnet a deployment runs at the network's own pace",
    })
  }
  const loaded = await loadPostableDefinition(input.file, input.network)
  const name = input.name ?? (input.file === '-' ? 'deployment' : basename(input.file, extname(input.file)))
  const body: CreateBody = {
    name,
    market: await input.market(loaded.upload.document as unknown as Record<string, unknown>),
    replicas,
    timeout,
    strategy: input.strategy,
    job_definition: loaded.upload.document,
    ...members,
    ...(input.timeScale === undefined ? {} : {time_scale: input.timeScale}),
    ...(queueTimeout === undefined ? {} : {queue_timeout: queueTimeout}),
    ...vault,
  }
  return {body, warnings: loaded.warnings}
}
