/**
 * `deployment logs`: the output of every replica of a deployment, each line with its job, through the same reader
 * as `job logs`. The jobs are the vault's, so their nodes take only the vault's signature: the manager signs each
 * node-API header (the network's `/:id/header`) over gpunet's message for that node, job and action.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {PublicKey} from '@solana/web3.js'

import type {DeploymentClient, DeploymentJob} from '../deployments/client/client.js'
import {GpunetError, isGpunetError} from '../errors.js'
import {jobLogs, type LogLine, type NodeApiPoster} from './logs.js'
import {stopExitCode} from './stop-signals.js'
import type {MarketNetwork} from '../market/connect.js'
import {clientMessage} from '../node-api/protocol.js'

/** A deployment in one of these states lists and extends nothing more: following ends once its jobs ended. */
const SETTLED = new Set(['DRAFT', 'STOPPED', 'ARCHIVED', 'ERROR'])

export interface ReplicaLogsOptions {
  follow: boolean
  /** One line of one replica; a returned promise holds that replica's stream until it settles. */
  line: (job: string, line: LogLine) => void | Promise<void>
  notice: (text: string) => void
  signal?: AbortSignal
  /** How often the manager is asked for new replicas while following (default 2 s). */
  pollMs?: number
}

/** Prints the logs of a deployment's QUEUED and RUNNING jobs; with `follow`, also of those it lists later. */
export async function deploymentLogs(
  client: DeploymentClient,
  net: MarketNetwork,
  id: string,
  options: ReplicaLogsOptions,
): Promise<{jobs: string[]}> {
  const deployment = await client.get(id)
  const poster: NodeApiPoster = {
    address: deployment.vault,
    header: (scope) => client.header(id, clientMessage(scope.action, scope.node, scope.job, Date.now()), true),
  }
  const read = (job: string) =>
    jobLogs(net, new PublicKey(job), {
      follow: options.follow,
      poster: async () => poster,
      line: (line) => options.line(job, line),
      notice: (text) => options.notice(`[${job}] ${text}`),
      signal: options.signal,
    })
  const followed = new Map<string, Promise<unknown>>()
  for (;;) {
    const active = (await activeJobs(client, id)).filter((job) => !followed.has(job.job))
    if (!options.follow) {
      const running = active.filter((job) => job.state === 'RUNNING')
      if (running.length === 0) options.notice(`Deployment ${id} has no running replica: no live lines`)
      for (const job of running) await read(job.job).catch((error: unknown) => quiet(error, job.job, options))
      return {jobs: running.map((job) => job.job)}
    }
    for (const job of active) {
      followed.set(
        job.job,
        read(job.job).catch((error: unknown) => quiet(error, job.job, options)),
      )
    }
    const status = (await client.get(id)).status
    if (SETTLED.has(status) && active.length === 0) {
      await Promise.all(followed.values())
      if (options.signal?.aborted) throw interrupted(options.signal)
      options.notice(`Deployment ${id} is ${status}; no more replicas to follow`)
      return {jobs: [...followed.keys()]}
    }
    try {
      await sleep(options.pollMs ?? 2000, undefined, {signal: options.signal})
    } catch {
      await Promise.all(followed.values())
      throw interrupted(options.signal)
    }
  }
}

/** The deployment's jobs not ended yet (the newest 100: a deployment runs at most 100 replicas). */
async function activeJobs(client: DeploymentClient, id: string): Promise<DeploymentJob[]> {
  const {jobs} = await client.jobs(id, {limit: 100, sort_order: 'desc'})
  return jobs.filter((job) => job.state === 'QUEUED' || job.state === 'RUNNING')
}

/** One replica's reader failing says so and leaves the others going; an interruption ends them all. */
function quiet(error: unknown, job: string, options: ReplicaLogsOptions): void {
  if (options.signal?.aborted) return
  const message = isGpunetError(error) ? error.message : String(error)
  options.notice(`[${job}] stopped reading its logs: ${message}`)
}

function interrupted(signal?: AbortSignal): GpunetError {
  return new GpunetError('logs_interrupted', 'Stopped reading the logs; the deployment goes on.', {
    exitCode: stopExitCode(signal),
  })
}
