/** What `job post` and `job get` print: one shape for `--json`, and the same fields as aligned human lines. */
import {PublicKey} from '@solana/web3.js'

import type {Network} from '../../network.js'
import type {Outcome} from '../../results/outcome.js'
import {type AmountJson, amountJson, formatAmount} from '../../text/amounts.js'
import {SOL_DECIMALS} from '../rpc/balances.js'
import {bytesToIpfsHash} from '../codec/ipfs-hash.js'
import type {JobStatus, JobView} from './jobs.js'
import {TOKEN_DECIMALS} from '../networks.js'
import {
  deploymentUrls,
  type ExposingDefinition,
  localnetNetworkUrls,
  type ServiceHosts,
  type ServiceUrl,
  serviceUrls,
} from '../service-url.js'

/**
 * Which name a service URL uses: the network's (the expose-id hash its nodes serve, on every network; on localnet
 * the gateway answers it too) or gpunet's own on localnet (`<job>` and `<job>-<port>`).
 */
export type ServiceUrlKind = 'network' | 'gpunet'

/** A job as `job get --json` prints it (docs/jobs.md). */
export interface JobReport {
  network: Network
  job: string
  /** The chain's state (docs/json.md, "States and outcomes"). */
  state: JobStatus
  /** Deprecated (0.2): `state`, kept for one minor version. */
  status: JobStatus
  market: string
  /** CIDv0 of the definition in the content store. */
  definition: string
  project: string
  pricePerSecond: AmountJson
  /** Paid duration in seconds. */
  timeout: number
  /** Price per second x timeout: the deposit. */
  totalPrice: AmountJson
  /** With `online` while the job runs, when its node's API said (the poster's `job get`). */
  serviceUrls: (ServiceUrl & {kind: ServiceUrlKind; online?: boolean})[]
  /** Each exposed operation's deployment URL, when the definition has a `deployment_id` (poster: the project). */
  deploymentUrls: ServiceUrl[]
  node: string | null
  startedAt: string | null
  endedAt: string | null
  durationSeconds: number | null
  /** What its run cost so far: price x the time it ran, capped at the timeout. */
  cost: AmountJson
  /** Deprecated (0.2): `cost`, kept for one minor version. */
  costSoFar: AmountJson
  /** CIDv0 of the result, once the job is done. */
  result: string | null
}

const ZERO_HASH = new Uint8Array(32)

/** Builds the report of a job read from the chain; `now` is unix seconds. */
export function jobReport(
  network: Network,
  view: JobView,
  definition: ExposingDefinition | null,
  hosts: ServiceHosts,
  now: number,
): JobReport {
  const {job, run} = view
  const started = run ? run.time : job.timeStart > 0n ? job.timeStart : null
  const ended = run || job.timeEnd === 0n ? null : job.timeEnd
  const elapsed = started === null ? null : (ended ?? BigInt(Math.floor(now))) - started
  const billed = elapsed === null ? 0n : elapsed < 0n ? 0n : elapsed > job.timeout ? job.timeout : elapsed
  const done = Buffer.from(job.ipfsResult).equals(ZERO_HASH) ? null : bytesToIpfsHash(job.ipfsResult)
  const live = view.status === 'QUEUED' || view.status === 'RUNNING'
  const tokens = (units: bigint) => amountJson(units, TOKEN_DECIMALS, 'token')
  return {
    network,
    job: view.address.toBase58(),
    state: view.status,
    status: view.status,
    market: job.market.toBase58(),
    definition: bytesToIpfsHash(job.ipfsJob),
    project: job.project.toBase58(),
    pricePerSecond: tokens(job.price),
    timeout: Number(job.timeout),
    totalPrice: tokens(job.price * job.timeout),
    serviceUrls: definition && live ? kindedServiceUrls(network, view.address.toBase58(), definition, hosts) : [],
    deploymentUrls: definition && live ? deploymentUrls(network, definition, job.project.toBase58(), hosts) : [],
    node: run ? run.node.toBase58() : job.node.equals(PublicKey.default) ? null : job.node.toBase58(),
    startedAt: started === null ? null : isoTime(started),
    endedAt: ended === null ? null : isoTime(ended),
    durationSeconds: elapsed === null ? null : Number(elapsed),
    cost: tokens(job.price * billed),
    costSoFar: tokens(job.price * billed),
    result: done,
  }
}

/** A job's service URLs, each with its kind: on localnet gpunet's own names, then the network's names of its ports. */
function kindedServiceUrls(
  network: Network,
  job: string,
  definition: ExposingDefinition,
  hosts: ServiceHosts,
): JobReport['serviceUrls'] {
  const own = serviceUrls(network, job, definition, hosts)
  const kind: ServiceUrlKind = network === 'localnet' ? 'gpunet' : 'network'
  const named = network === 'localnet' ? localnetNetworkUrls(job, definition, hosts) : []
  return [...own.map((url) => ({...url, kind})), ...named.map((url) => ({...url, kind: 'network' as const}))]
}

/** The report's fields as aligned `Label  value` lines. */
export function reportLines(rows: [string, string | null | undefined][]): string[] {
  const shown = rows.filter((row): row is [string, string] => row[1] !== null && row[1] !== undefined)
  const width = Math.max(...shown.map(([label]) => label.length))
  return shown.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`)
}

/** An amount as text: "0.72 tokens". */
export function amountText(amount: AmountJson): string {
  // From the exact base units: a JavaScript number prints 0.000000001 as 1e-9.
  const decimal = formatAmount(BigInt(amount.baseUnits), amount.unit === 'SOL' ? SOL_DECIMALS : TOKEN_DECIMALS)
  if (amount.unit === 'SOL') return `${decimal} SOL`
  return `${decimal} ${amount.unit}${decimal === '1' ? '' : 's'}`
}

/** The rows `job get` prints for a job. */
export function jobRows(report: JobReport): [string, string | null][] {
  return [
    ['Network', report.network],
    ['Job', report.job],
    ['State', report.state],
    ['Market', report.market],
    ['Definition', report.definition],
    ['Price', `${amountText(report.pricePerSecond)}/s`],
    ['Timeout', `${report.timeout} s`],
    ['Total price', amountText(report.totalPrice)],
    ['Node', report.node],
    ['Started', report.startedAt],
    ['Ended', report.endedAt],
    ['Duration', report.durationSeconds === null ? null : `${report.durationSeconds} s`],
    ['Cost so far', amountText(report.cost)],
    ...report.serviceUrls.map(({op, port, url, online, kind}): [string, string] => [
      // On localnet gpunet's own names keep their rows; the network's names of the same ports come after them.
      report.network === 'localnet' && kind === 'network' ? `Network URL ${op}:${port}` : `Service ${op}:${port}`,
      online === undefined ? url : `${url}  (${online ? 'online' : 'offline'})`,
    ]),
    ...report.deploymentUrls.map(({op, port, url}): [string, string] => [`Deployment ${op}:${port}`, url]),
    ['Result', report.result],
  ]
}

/** ISO text of unix seconds; null for a time no Date holds (an account or an indexer answer with garbage in it). */
export function isoTime(seconds: bigint | number): string | null {
  const ms = Number(seconds) * 1000
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null
}

/**
 * The outcome of a job from its chain state, its result CID and what its result says: a job its node gave up
 * (STOPPED, delisted ones too) or its poster ended before a result (COMPLETED without one) was stopped, whatever
 * its result may later say; a job with a result went as the result says.
 */
export function settledOutcome(state: JobStatus, result: string | null, fromResult: Outcome | null): Outcome | null {
  if (state === 'STOPPED') return 'stopped'
  if (state !== 'COMPLETED') return null
  return result === null ? 'stopped' : fromResult
}

/** Rows as aligned columns, two spaces apart, without trailing blanks. */
export function alignedColumns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  return rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  )
}
