/**
 * What `deployment create` checks before it sends anything: the replica count, the timeout (the network counts
 * minutes), the time scale, and the definition, validated and put in the network's form exactly as `job post`
 * does, so an invalid one is exit 3 with nothing created or paid.
 */
import {basename, extname} from 'node:path'

import {loadPostableDefinition} from '../definition/upload.js'
import type {LocatedIssue} from '../definition/check.js'
import {ExitCode, GpunetError} from '../errors.js'
import {durationMs} from '../text/durations.js'
import type {Network} from '../network.js'
import type {CreateBody} from './client.js'

/** The network's API takes 1 to 100 replicas. */
export const MAX_REPLICAS = 100

/** The strategies part 1 of the manager runs (the network's SCHEDULED and INFINITE come later). */
export const CREATE_STRATEGIES = ['SIMPLE', 'SIMPLE-EXTEND'] as const

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
  /** The market's address, asked for once every local check passed (it may start the localnet). */
  market: () => Promise<string>
  replicas: number
  strategy: string
  timeout: string
  name?: string
  timeScale?: number
}

/**
 * The create body of a definition file, every local check passed (usage: exit 2; definition: exit 3), and the
 * definition's warnings for the caller to show.
 */
export async function createBody(input: CreateInput): Promise<{body: CreateBody; warnings: LocatedIssue[]}> {
  const replicas = checkReplicas(input.replicas)
  const timeout = timeoutMinutes(input.timeout)
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
    market: await input.market(),
    replicas,
    timeout,
    strategy: input.strategy,
    job_definition: loaded.upload.document,
    ...(input.timeScale === undefined ? {} : {time_scale: input.timeScale}),
  }
  return {body, warnings: loaded.warnings}
}
